// Assets embedded in the binary as text (`with { type: "text" }`): no CDN, nothing beside the executable.
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*.client.js" {
  const text: string;
  export default text;
}
declare module "*.svg" {
  const text: string;
  export default text;
}
