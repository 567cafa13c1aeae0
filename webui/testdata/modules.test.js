// The page's modules link: every name a module imports is one the other
// module exports, which a browser checks only when it loads the page.
// node links them the same way; running them needs a document, so an
// error of their running (a ReferenceError) is expected, not a SyntaxError.

import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { describe, it } from "node:test";

const assets = new URL("../assets/", import.meta.url);

describe("modules", () => {
  for (const name of readdirSync(assets).filter((n) => n.endsWith(".js"))) {
    it(`${name} links`, async () => {
      try {
        await import(new URL(name, assets));
      } catch (err) {
        assert.ok(!(err instanceof SyntaxError), `${name}: ${err.message}`);
      }
    });
  }
});
