/** Ambient declarations of the page build: esbuild bundles imported stylesheets. */
declare module "*.css";
