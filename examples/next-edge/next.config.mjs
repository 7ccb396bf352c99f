/** @type {import('next').NextConfig} */
const config = {
  // This example has its own lockfile inside the turnkeep repository: build from here.
  turbopack: { root: import.meta.dirname },
  // The Node.js routes and pages load turnkeep from node_modules as Node does (its `node` entry
  // reads its wasm file next to it); the edge route still gets it bundled, wasm precompiled.
  serverExternalPackages: ['turnkeep'],
};
export default config;
