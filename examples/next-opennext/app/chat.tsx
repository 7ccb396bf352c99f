'use client';
// The chat is drawn in the browser only (`ssr: false`): rendered on the server too, it would
// take turnkeep/client and its wasm (~190 kB gzip) into the Worker, where nothing uses them.
import dynamic from 'next/dynamic';

export const Chat = dynamic(() => import('./live-chat').then((m) => m.LiveChat), {
  ssr: false,
  loading: () => <section data-ready="0">Connecting…</section>,
});
