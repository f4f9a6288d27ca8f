#!/usr/bin/env node
// Offline TLA+ syntax check.
//
// Usage: node tools/tlaparse/parse.mjs FILE.tla...
//
// Parses each file with the tree-sitter-tlaplus grammar (the prebuilt
// tree-sitter-tlaplus.wasm shipped in the @tlaplus/tree-sitter-tlaplus npm
// package, loaded through web-tree-sitter) and reports every ERROR or
// MISSING node as
//
//   FILE:LINE:COL: syntax error near '<snippet>'
//
// (LINE and COL are 1-based). Clean files print `ok FILE (N nodes)`.
// In addition, because SANY rejects them, a .tla file is reported when it
// contains no `---- MODULE Name ----` or when its first module's name does not
// match the file's base name.
//
// Exit status: 0 all files clean, 1 at least one file has an error,
// 2 usage error (no arguments, unreadable file, grammar not installed).
//
// This is a syntax check only: it does not resolve names, check levels or
// arity, or evaluate anything. SANY/TLC (tools/tlc.sh) do that.

import { readFileSync, existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const WASM = join(here, "node_modules", "@tlaplus", "tree-sitter-tlaplus", "tree-sitter-tlaplus.wasm");

function usage(msg) {
  if (msg) console.error(`tlaparse: ${msg}`);
  console.error("usage: node tools/tlaparse/parse.mjs FILE.tla...");
  process.exit(2);
}

const files = process.argv.slice(2);
if (files.length === 0) usage("no files given");
if (files.includes("-h") || files.includes("--help")) usage();
for (const f of files) {
  if (f.startsWith("-")) usage(`unknown option ${f}`);
  if (!existsSync(f)) usage(`${f}: no such file`);
}
if (!existsSync(WASM)) {
  usage(`grammar not found at ${WASM}; run: npm ci --legacy-peer-deps --prefix tools/tlaparse`);
}

let Parser, Language;
try {
  ({ Parser, Language } = await import("web-tree-sitter"));
} catch (e) {
  usage(`cannot load web-tree-sitter (${e.message}); run: npm ci --legacy-peer-deps --prefix tools/tlaparse`);
}
await Parser.init();
const tla = await Language.load(readFileSync(WASM));
const parser = new Parser();
parser.setLanguage(tla);

// snippet returns a short single-line excerpt of src starting at byte/char
// index `from` (web-tree-sitter indexes JS strings in UTF-16 code units).
function snippet(src, from) {
  let s = src.slice(from, from + 60).split("\n")[0].trim();
  if (s.length > 40) s = s.slice(0, 40) + "...";
  return s === "" ? "<end of line>" : s;
}

function check(file) {
  const src = readFileSync(file, "utf8");
  const tree = parser.parse(src);
  const problems = [];
  const report = (node, extra) => {
    const { row, column } = node.startPosition;
    problems.push(`${file}:${row + 1}:${column + 1}: syntax error near '${snippet(src, node.startIndex)}'${extra}`);
  };

  // Iterative pre-order walk with a cursor: no recursion depth limit.
  let count = 0;
  const cursor = tree.walk();
  for (;;) {
    const node = cursor.currentNode;
    count++;
    if (node.isMissing) report(node, ` (missing '${node.type}')`);
    else if (node.isError && cursor.currentDepth === 0) {
      // The whole file is one ERROR: tree-sitter could not recover anywhere,
      // so this position says little; nested ERROR/MISSING nodes (if any)
      // are reported below it with better positions.
      report(node, " (the file does not parse as a module: check the '---- MODULE' header, the '====' footer and bracket balance)");
    } else if (node.isError) report(node, "");
    if (cursor.gotoFirstChild() || cursor.gotoNextSibling()) continue;
    let done = true;
    while (cursor.gotoParent()) {
      if (cursor.gotoNextSibling()) { done = false; break; }
    }
    if (done) break;
  }

  const root = tree.rootNode;
  if (file.endsWith(".tla") && problems.length === 0) {
    const mod = root.namedChildren.find((n) => n.type === "module");
    if (!mod) {
      problems.push(`${file}:1:1: syntax error: no '---- MODULE Name ----' header found`);
    } else {
      const name = mod.childForFieldName("name");
      const want = basename(file, ".tla");
      if (name && name.text !== want) {
        const { row, column } = name.startPosition;
        problems.push(`${file}:${row + 1}:${column + 1}: module name '${name.text}' does not match file name '${want}.tla' (SANY requires them to be equal)`);
      }
    }
  }
  tree.delete();
  return { problems, count };
}

let failed = 0;
for (const file of files) {
  const { problems, count } = check(file);
  if (problems.length > 0) {
    failed++;
    for (const p of problems) console.log(p);
  } else {
    console.log(`ok ${file} (${count} nodes)`);
  }
}
if (failed > 0) {
  console.error(`tlaparse: ${failed} of ${files.length} file(s) have syntax errors`);
  process.exit(1);
}
