/**
 * Markup written as strings, escaped: an element with its attributes and
 * children, for the HTML report's pictures and tables. Every text and
 * attribute value goes through `escapeXml`, since task ids, framework names
 * and expectations come from the user's files and frameworks.
 */

/** Text safe in an element and in a quoted attribute. */
export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export type Attrs = Readonly<Record<string, string | number | undefined>>;

/** A number for a coordinate: two decimals at most, so the markup stays short. */
export const px = (n: number): string => String(Math.round(n * 100) / 100);

/** HTML elements without an end tag. */
const VOID = new Set(['br', 'meta']);

/** `<tag attrs>children</tag>`; children are markup already (from `el` or `text`); undefined attributes are left out. */
export function el(tag: string, attrs: Attrs = {}, ...children: readonly string[]): string {
  const written = Object.entries(attrs)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${escapeXml(typeof v === 'number' ? px(v) : (v as string))}"`)
    .join('');
  if (VOID.has(tag)) return `<${tag}${written}>`;
  return `<${tag}${written}>${children.join('')}</${tag}>`;
}

/** Escaped text, as a child of `el`. */
export const text = (s: string): string => escapeXml(s);

/** An SVG tooltip: what a pointer on the element shows. */
export const title = (s: string): string => el('title', {}, text(s));
