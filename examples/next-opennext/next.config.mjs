/** @type {import('next').NextConfig} */
const config = {
  // This example has its own lockfile inside the turnkeep repository: build from here.
  turbopack: { root: import.meta.dirname },
};
export default config;
