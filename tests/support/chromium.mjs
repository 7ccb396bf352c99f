// Headless Chromium for the browser tests: Debian's /usr/bin/chromium driven by playwright-core
// (never a browser download), with the flags a container needs.
import { chromium } from 'playwright-core';

export function launchChromium() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'],
  });
}
