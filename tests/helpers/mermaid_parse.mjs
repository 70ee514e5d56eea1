// Checks Mermaid diagrams with Mermaid's own parser, offline.
//
//   MERMAID_NODE_MODULES=.cache/mermaid/node_modules node mermaid_parse.mjs FILE...
//
// Each FILE holds one diagram's text (what goes between the ```mermaid fences).
// For each, one JSON line on stdout: {"file", "type", "tasks", "chars"}. The
// first diagram Mermaid rejects ends the run: its error on stderr, exit 1
// (exit 2: bad usage or no Mermaid install). A diagram is rejected when:
//   - it is longer than Mermaid's maxTextSize (Mermaid would draw an error instead),
//   - `mermaid.parse` fails (the grammar),
//   - for a gantt, a task's dates do not read as dates, or a task ends before it
//     starts (the diagram's database, which renders from them, is asked for every task).
//
// Mermaid's sanitizer (DOMPurify) needs a DOM: jsdom provides it, installed next to
// Mermaid by the Makefile. ESM imports ignore NODE_PATH, so both are resolved from
// MERMAID_NODE_MODULES explicitly.

import { readFileSync } from "node:fs";

import { commandLine } from "./mermaid_node.mjs";

const { files, fail, load } = commandLine("mermaid_parse");

const { JSDOM } = await load("jsdom");
const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await load("mermaid");
mermaid.initialize({ startOnLoad: false });
const maxTextSize = mermaid.mermaidAPI.getConfig().maxTextSize;

async function check(file) {
  const text = readFileSync(file, "utf8");
  if (text.length > maxTextSize) {
    throw new Error(`${text.length} characters, over Mermaid's maxTextSize of ${maxTextSize}`);
  }
  const parsed = await mermaid.parse(text);
  const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
  let tasks = null;
  if (parsed.diagramType === "gantt") {
    const all = diagram.db.getTasks();
    for (const task of all) {
      const start = task.startTime?.valueOf();
      const end = task.endTime?.valueOf();
      if (!Number.isFinite(start) || !Number.isFinite(end)) {
        throw new Error(`task ${JSON.stringify(task.task)} has no valid dates`);
      }
      if (end < start) {
        throw new Error(`task ${JSON.stringify(task.task)} ends before it starts`);
      }
    }
    tasks = all.length;
  }
  return { file, type: parsed.diagramType, tasks, chars: text.length };
}

for (const file of files) {
  let report;
  try {
    report = await check(file);
  } catch (error) {
    fail(1, `${file}: ${String(error?.message ?? error)}`);
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
