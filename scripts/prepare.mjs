// `npm install` in this checkout (and installing it into another project) runs `prepare`: build
// with the checkout's dev dependencies. Installing a fresh clone straight into an app
// (`npm install ../soniq`) has no TypeScript compiler: say what to do instead of `tsc: not found`.
import { execSync } from "node:child_process";
import { existsSync } from "node:fs";

if (!existsSync("node_modules/typescript/bin/tsc")) {
  if (existsSync("dist/index.js")) process.exit(0); // already built (e.g. a packed tarball)
  process.stderr.write(
    "soniq: this checkout is not built and has no dev dependencies. In the checkout run\n" +
      "  npm ci && npm pack\n" +
      "then install the tarball it writes in your app: npm install /path/to/soniq/soniq-0.1.0.tgz\n",
  );
  process.exit(1);
}
execSync("npm run build", { stdio: "inherit" });
