/** The build's version, shown by `vigil --version` and in the OpenAPI document. */
export const VERSION = "0.1.0";
