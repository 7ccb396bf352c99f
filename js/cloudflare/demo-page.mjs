export const DEMO_PAGE_HTML = "<!doctype html><title>turnkeep</title><p>placeholder";
