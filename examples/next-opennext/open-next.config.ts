// OpenNext's defaults: no incremental cache (every page here is rendered per request).
import { defineCloudflareConfig } from '@opennextjs/cloudflare';

export default defineCloudflareConfig();
