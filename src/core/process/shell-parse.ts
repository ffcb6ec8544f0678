/**
 * The small shell's parser: a script into commands joined by `;`,
 * newlines, `&&`, `||` and `|`, each with its words and redirections, as
 * dash reads them. One loop over the text, no recursion: a script of any
 * length or depth parses in a bounded stack.
 *
 *   words       blanks split them; '…' keeps its text as it is; "…" and
 *               unquoted text expand `$NAME`, `${NAME}` and `$?`; a
 *               backslash quotes the character after it
 *   redirects   `[n]>`, `[n]>>`, `[n]>|`, `[n]<`, `[n]<>`, `[n]>&m`,
 *               `[n]<&m` where they stand among the words, the target the
 *               word after (a blank between or not); `n` a single digit
 *               written just before the operator; a quoted `'>'` is a word
 *   comments    `#` at the start of a word, to the end of the line
 *
 * Unsupported constructs (parentheses, braces, `$(…)`, backquotes, `&`)
 * stay plain text, so that they come to a command as words and fail as
 * commands that are not found rather than as guesses.
 */

export type Op = ';' | '&&' | '||' | '|';

/** A `$` expansion inside a word: a variable's name, or `?` for the last exit code. */
export interface Variable {
  readonly name: string;
}

/** A word with expansions: its text as written with the quotes gone, and its parts to expand. */
export interface ExpandingWord {
  readonly text: string;
  readonly parts: readonly (string | Variable)[];
  /** Some of it was quoted: it stays one word, even empty. */
  readonly quoted: boolean;
}

/** A word: plain text, or one with `$` expansions. */
export type Word = string | ExpandingWord;

export type RedirectOp = '>' | '>>' | '<' | '>&' | '<&';

export interface Redirect {
  /** The file descriptor it changes (0 standard input, 1 output, 2 error). */
  readonly fd: number;
  readonly op: RedirectOp;
  /** The file, or for `>&`/`<&` the descriptor (`-` closes). */
  readonly target: Word;
}

export interface Command {
  readonly words: readonly Word[];
  readonly redirects: readonly Redirect[];
  /** How it joins the command before it. */
  readonly op: Op;
  /** The line of the script it starts on, from 1 (what dash's messages name). */
  readonly line: number;
}

export interface Script {
  /** The commands that run: all of them, or those on the lines before a syntax error. */
  readonly commands: readonly Command[];
  /** A syntax error, as dash reports it (`Syntax error: newline unexpected`), and its line. */
  readonly error?: { readonly line: number; readonly message: string };
}

const NO_REDIRECTS: readonly Redirect[] = [];

/** The characters that end a run of plain ones in a word. */
const SPECIAL = new Set(['"', "'", ';', '\n', '|', ' ', '\t', '<', '>', '$', '\\', '&']);

/** A word's text with its quotes gone and `$` expansions as written: what a task's plan reads. */
export function wordText(word: Word): string {
  return typeof word === 'string' ? word : word.text;
}

/** Splits a script into commands with their words and redirections. */
export function parse(script: string): Script {
  return new Parser(script).run();
}

class Parser {
  readonly #commands: Command[] = [];
  #op: Op = ';';
  #line = 1;
  #commandLine = 1;
  #words: Word[] = [];
  #redirects: Redirect[] | undefined;
  #word = '';
  #parts: (string | Variable)[] | undefined;
  #inWord = false;
  #quoted = false;
  /** A redirection waiting for its target word. */
  #pending: { fd: number; op: RedirectOp } | undefined;
  #error: { line: number; message: string } | undefined;
  #i = 0;

  constructor(private readonly s: string) {}

  run(): Script {
    const s = this.s;
    while (this.#i < s.length && this.#error === undefined) this.#step(s[this.#i]!);
    if (this.#error === undefined) this.#endCommand(';', 'end of file');
    if (this.#error === undefined) return { commands: this.#commands };
    const line = this.#error.line;
    return { commands: this.#commands.filter((c) => c.line < line), error: this.#error };
  }

  #step(c: string): void {
    const s = this.s;
    const next = s[this.#i + 1];
    if (c === "'") return this.#singleQuoted();
    if (c === '"') return this.#doubleQuoted();
    if (c === '\\') return this.#escaped(next);
    if (c === '$') {
      this.#i = this.#variable(this.#i + 1);
      return;
    }
    if (c === '>' || c === '<') return this.#redirect(c, next);
    if (c === '#' && !this.#inWord) {
      const end = s.indexOf('\n', this.#i);
      this.#i = end < 0 ? s.length : end;
      return;
    }
    if (c === '&' && next === '&') return this.#operator('&&', 2);
    if (c === '|' && next === '|') return this.#operator('||', 2);
    if (c === '|') return this.#operator('|', 1);
    if (c === ';') return this.#operator(';', 1);
    if (c === '\n') {
      this.#operator(';', 1, 'newline');
      this.#line++;
      return;
    }
    if (c === ' ' || c === '\t') {
      this.#endWord();
      this.#i++;
      return;
    }
    let end = this.#i + 1;
    while (end < s.length && !SPECIAL.has(s[end]!)) end++;
    this.#add(s.slice(this.#i, end), false);
    this.#i = end;
  }

  #add(text: string, quoted: boolean): void {
    this.#word += text;
    this.#parts?.push(text);
    this.#inWord = true;
    if (quoted) this.#quoted = true;
  }

  #singleQuoted(): void {
    const close = this.s.indexOf("'", this.#i + 1);
    if (close < 0) return this.#fail('Unterminated quoted string');
    const end = close;
    this.#countLines(this.#i + 1, end);
    this.#add(this.s.slice(this.#i + 1, end), true);
    this.#i = end + 1;
  }

  /** "…": `$` expands, and a backslash quotes `$`, `"`, `\` and a newline. */
  #doubleQuoted(): void {
    const s = this.s;
    this.#add('', true);
    let i = this.#i + 1;
    while (i < s.length && s[i] !== '"') {
      const c = s[i]!;
      if (c === '$') {
        i = this.#variable(i + 1);
        continue;
      }
      if (c === '\\' && i + 1 < s.length && '$"\\\n`'.includes(s[i + 1]!)) {
        if (s[i + 1] !== '\n') this.#add(s[i + 1]!, true);
        i += 2;
        continue;
      }
      let end = i + 1;
      while (end < s.length && s[end] !== '"' && s[end] !== '$' && s[end] !== '\\') end++;
      this.#countLines(i, end);
      this.#add(s.slice(i, end), true);
      i = end;
    }
    if (i >= s.length) return this.#fail('Unterminated quoted string');
    this.#i = i + 1;
  }

  #escaped(next: string | undefined): void {
    if (next === undefined) this.#add('\\', false);
    else if (next !== '\n') this.#add(next, true);
    else this.#line++;
    this.#i += 2;
  }

  /** After a `$` at `at - 1`: the variable it names, or a plain `$`; answers where the text goes on. */
  #variable(at: number): number {
    const s = this.s;
    let name: string | undefined;
    let end = at;
    if (s[at] === '?' || s[at] === '$') (name = s[at]), (end = at + 1);
    else if (s[at] === '{') {
      const close = s.indexOf('}', at + 1);
      const inner = close < 0 ? '' : s.slice(at + 1, close);
      if (/^([A-Za-z_][A-Za-z0-9_]*|\?)$/.test(inner)) (name = inner), (end = close + 1);
    } else {
      while (end < s.length && /[A-Za-z0-9_]/.test(s[end]!) && !(end === at && /[0-9]/.test(s[end]!))) end++;
      if (end > at) name = s.slice(at, end);
    }
    if (name === undefined) {
      this.#add('$', false);
      return at;
    }
    this.#parts ??= this.#word === '' ? [] : [this.#word];
    this.#parts.push({ name });
    this.#word += s.slice(at - 1, end);
    this.#inWord = true;
    return end;
  }

  #redirect(c: '>' | '<', next: string | undefined): void {
    let fd = c === '>' ? 1 : 0;
    const io = this.#inWord && !this.#quoted && this.#parts === undefined && /^[0-9]$/.test(this.#word);
    if (io) {
      fd = Number(this.#word);
      this.#resetWord();
    } else this.#endWord();
    if (this.#words.length === 0 && this.#redirects === undefined && this.#pending === undefined)
      this.#commandLine = this.#line;
    let op: RedirectOp = c;
    let length = 1;
    if (c === '>' && next === '>') (op = '>>'), (length = 2);
    else if (next === '&') (op = c === '>' ? '>&' : '<&'), (length = 2);
    else if (c === '>' && next === '|') length = 2;
    else if (c === '<' && next === '>') length = 2;
    else if (c === '<' && next === '<') return this.#fail('here-documents are not supported');
    if (this.#pending !== undefined) return this.#fail(`"${this.s.slice(this.#i, this.#i + length)}" unexpected`);
    this.#pending = { fd, op };
    this.#i += length;
  }

  #operator(op: Op, length: number, spelling: string = op): void {
    this.#endCommand(op, spelling);
    this.#i += length;
  }

  #endWord(): void {
    if (!this.#inWord) return;
    const word: Word =
      this.#parts === undefined ? this.#word : { text: this.#word, parts: this.#parts, quoted: this.#quoted };
    const pending = this.#pending;
    if (pending !== undefined) {
      if ((pending.op === '>&' || pending.op === '<&') && typeof word === 'string' && !/^([0-9]|-)$/.test(word))
        return this.#fail('Bad fd number');
      (this.#redirects ??= []).push({ ...pending, target: word });
      this.#pending = undefined;
    } else {
      if (this.#words.length === 0 && this.#redirects === undefined) this.#commandLine = this.#line;
      this.#words.push(word);
    }
    this.#resetWord();
  }

  #resetWord(): void {
    this.#word = '';
    this.#parts = undefined;
    this.#inWord = false;
    this.#quoted = false;
  }

  #endCommand(next: Op, spelling: string): void {
    this.#endWord();
    if (this.#error !== undefined) return;
    if (this.#pending !== undefined)
      return this.#fail(
        `${spelling === 'newline' || spelling === 'end of file' ? spelling : `"${spelling}"`} unexpected`,
      );
    if (this.#words.length > 0 || this.#redirects !== undefined) {
      const line = this.#commandLine;
      this.#commands.push({ words: this.#words, redirects: this.#redirects ?? NO_REDIRECTS, op: this.#op, line });
    }
    this.#words = [];
    this.#redirects = undefined;
    this.#op = next;
  }

  #fail(message: string): void {
    this.#error = { line: this.#line, message: `Syntax error: ${message}` };
  }

  #countLines(from: number, to: number): void {
    for (let i = from; i < to; i++) if (this.s.charCodeAt(i) === 10) this.#line++;
  }
}
