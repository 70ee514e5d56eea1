// Renders Mermaid gantt charts with Mermaid's own renderer, offline, and prints what a
// reader sees of each task: the text of its label in the SVG.
//
//   MERMAID_NODE_MODULES=.cache/mermaid/node_modules node mermaid_render.mjs FILE...
//
// Each FILE holds one diagram's text (what goes between the ```mermaid fences). For
// each, one JSON line on stdout: {"file", "labels": [the tasks' label texts, in order]}.
// A diagram Mermaid cannot render ends the run: its error on stderr, exit 1 (exit 2: bad
// usage or no Mermaid install).
//
// mermaid.render() runs the whole pipeline a page runs: the entity codes are encoded
// before parsing and decoded in the SVG it returns; the SVG is then read back by a DOM
// parser (jsdom), so a label is the text a browser shows. jsdom lays nothing out: text
// measures are stubbed (10 px a character), which moves labels but changes no text.

import { readFileSync } from "node:fs";

import { commandLine } from "./mermaid_node.mjs";

const { files, fail, load } = commandLine("mermaid_render");

const { JSDOM } = await load("jsdom");
const dom = new JSDOM("<!doctype html><html><body></body></html>", { pretendToBeVisual: true });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
for (const name of ["CSSStyleSheet", "Element", "SVGElement", "HTMLElement", "Node"]) {
  if (!(name in globalThis)) globalThis[name] = dom.window[name];
}
const measure = function () {
  return (this.textContent ?? "").length * 10;
};
dom.window.SVGElement.prototype.getComputedTextLength = measure;
dom.window.SVGElement.prototype.getBBox = function () {
  return { x: 0, y: 0, width: measure.call(this), height: 10 };
};
const { default: mermaid } = await load("mermaid");
mermaid.initialize({ startOnLoad: false });

for (const [number, file] of files.entries()) {
  let labels;
  try {
    const { svg } = await mermaid.render(`chart${number}`, readFileSync(file, "utf8"));
    const shown = new JSDOM(svg, { contentType: "image/svg+xml" }).window.document;
    labels = [...shown.querySelectorAll("text[id$='-text']")].map((node) => node.textContent);
  } catch (error) {
    fail(1, `${file}: ${String(error?.message ?? error)}`);
  }
  process.stdout.write(`${JSON.stringify({ file, labels })}\n`);
}
