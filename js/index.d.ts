/** The crate version of the loaded wasm build. */
export function version(): string;
