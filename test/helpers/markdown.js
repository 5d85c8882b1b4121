// Reading the project's Markdown documentation the way GitHub renders it:
// which files are documentation, their fenced code blocks, their links and
// the anchors their headings get.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** README.md, CONTRIBUTING.md and docs/*.md, as paths relative to the repository root. */
export function documentationFiles() {
  const files = ['README.md', 'CONTRIBUTING.md'].filter((file) => existsSync(path.join(REPO_ROOT, file)));
  const docs = path.join(REPO_ROOT, 'docs');
  if (existsSync(docs)) {
    for (const name of readdirSync(docs).sort()) if (name.endsWith('.md')) files.push(`docs/${name}`);
  }
  return files;
}

export function readDocumentation(file) {
  return readFileSync(path.join(REPO_ROOT, file), 'utf8');
}

const FENCE = /^( {0,3}|\s*)(`{3,}|~{3,})(.*)$/;

/**
 * Every fenced code block of `text`: `line` is the 1-based line of its opening
 * fence, `lang` the first word of the info string ('' when none), `code` its
 * content with the fence's indentation removed (a fence may sit in a list
 * item), `before` the line right before the opening fence, trimmed.
 */
export function fencedBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = FENCE.exec(lines[j]);
      if (close && close[2][0] === fence[0] && close[2].length >= fence.length && close[3].trim() === '') break;
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j].trimStart());
    }
    blocks.push({
      line: i + 1,
      endLine: j + 1,
      info: info.trim(),
      lang: info.trim().split(/[\s{]/)[0].toLowerCase(),
      code: body.join('\n') + '\n',
      before: i > 0 ? lines[i - 1].trim() : '',
    });
    i = j;
  }
  return blocks;
}

/** `text` with every fenced block's lines blanked (line numbers and offsets kept), so that code is not read as prose. */
export function withoutCodeBlocks(text) {
  const lines = text.split('\n');
  for (const block of fencedBlocks(text)) {
    for (let n = block.line - 1; n < Math.min(block.endLine, lines.length); n++) lines[n] = ' '.repeat(lines[n].length);
  }
  return lines.join('\n');
}

/** Inline code spans blanked, keeping offsets: a link written inside backticks is not a link. */
function withoutCodeSpans(text) {
  return text.replace(/(`+)(?!`)[\s\S]*?[^`]\1(?!`)|(`+)[^`]\2/g, (span) => span.replace(/[^\n]/g, ' '));
}

/** The link targets of `text` outside code: inline links and images, reference definitions and HTML href/src, with their lines. */
export function linkTargets(text) {
  const prose = withoutCodeSpans(withoutCodeBlocks(text));
  const lineOf = (index) => prose.slice(0, index).split('\n').length;
  const targets = [];
  const patterns = [
    /\]\(\s*<([^>]*)>[^)]*\)/g,
    /\]\(\s*([^)\s<][^)\s]*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g,
    /^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/gm,
    /\b(?:href|src)="([^"]*)"/g,
  ];
  for (const pattern of patterns) {
    for (const match of prose.matchAll(pattern)) targets.push({ line: lineOf(match.index), target: match[1] });
  }
  return targets.sort((a, b) => a.line - b.line);
}

/** The text GitHub renders for a heading's Markdown (code spans, links, emphasis and inline HTML reduced to their text). */
function headingText(markdown) {
  return markdown
    .split(/(`+[^`]*`+)/)
    .map((part, index) => {
      if (index % 2 === 1) return part.replace(/^`+|`+$/g, '');
      return part
        .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/<[^>]+>/g, '')
        .replace(/(^|\W)[*_]{1,3}(?=\S)|(?<=\S)[*_]{1,3}(?=\W|$)/g, '$1');
    })
    .join('');
}

/** GitHub's anchor for a heading text: lower case, punctuation dropped, spaces to hyphens. */
export function githubSlug(text) {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor `text` defines: its headings' slugs (a repeated one gets -1, -2, ... as on GitHub) and explicit `<a id|name="...">`. */
export function anchors(text) {
  const prose = withoutCodeBlocks(text);
  const seen = new Map();
  const result = new Set();
  for (const match of prose.matchAll(/^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/gm)) {
    const slug = githubSlug(headingText(match[1]));
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const match of prose.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) result.add(match[1]);
  return result;
}
