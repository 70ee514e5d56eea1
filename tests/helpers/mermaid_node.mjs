// What the Mermaid scripts share: their command line, and Mermaid and jsdom loaded from
// MERMAID_NODE_MODULES (ESM imports ignore NODE_PATH, so both are resolved explicitly).
//
//   const { files, fail, load } = commandLine("mermaid_parse");

import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

export function commandLine(program) {
  const fail = (code, message) => {
    process.stderr.write(`${program}: ${message}\n`);
    process.exit(code);
  };
  const modules = process.env.MERMAID_NODE_MODULES;
  const files = process.argv.slice(2);
  if (!modules || files.length === 0) {
    fail(2, `usage: MERMAID_NODE_MODULES=DIR node ${program}.mjs FILE...`);
  }
  const require = createRequire(path.join(path.resolve(modules), "resolve-from-here.js"));
  const load = async (name) => {
    let resolved;
    try {
      resolved = require.resolve(name);
    } catch (error) {
      fail(2, `${name} is not installed in ${modules}: ${error.message}`);
    }
    return import(pathToFileURL(resolved).href);
  };
  return { files, fail, load };
}
