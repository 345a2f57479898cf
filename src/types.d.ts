declare module "*.sql" {
  const text: string;
  export default text;
}

// Files embedded in the binary with `with { type: "file" }` import as their path.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const path: string;
  export default path;
}
