// `npm run build`: copies the installed package's browser client (turnkeep/client: its modules
// under js/ and its wasm, pkg-client/) into public/turnkeep/, which wrangler.toml serves as
// static assets, so the page imports the package's own client as it is.
import { cpSync, existsSync, rmSync } from 'node:fs';

const from = new URL('../node_modules/turnkeep/', import.meta.url);
const to = new URL('../public/turnkeep/', import.meta.url);
if (!existsSync(new URL('pkg-client/turnkeep_bg.wasm', from))) {
  throw new Error('node_modules/turnkeep has no browser client: install the package first (README.md)');
}
rmSync(to, { recursive: true, force: true });
for (const dir of ['js/', 'pkg-client/']) cpSync(new URL(dir, from), new URL(dir, to), { recursive: true });
