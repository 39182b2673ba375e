/**
 * A prospect list as the team imports it: CSV (`url,name,notes` with a header row, or one URL per
 * line) or JSON entries. Every row is checked; a bad one is reported by its line so the whole
 * list can be fixed in one go. Pure.
 */
import { type Prospect, normaliseProspectUrl } from './prospects.ts';
import { cleanedText, truncateText } from './text.ts';

export const MAX_PROSPECTS_PER_IMPORT = 5000;

export interface ProspectEntry {
  url: string;
  name?: string | null;
  notes?: string | null;
}

export type ProspectListResult = { ok: true; prospects: Prospect[] } | { ok: false; errors: string[] };

/**
 * RFC 4180 CSV: quoted fields with `""` escapes and line breaks inside quotes; `,` or `;` separated.
 * A quoted field still open at the end is an error (with the line it opened on): read as a field, it
 * would swallow every row after it.
 */
export function parseCsv(text: string): { ok: true; rows: string[][] } | { ok: false; error: string } {
  const rows: string[][] = [];
  const body = text.replace(/^\uFEFF/, '');
  const separator = /^[^\n]*;[^\n]*$/m.test(body.split(/\r?\n/)[0] ?? '') && !(body.split(/\r?\n/)[0] ?? '').includes(',') ? ';' : ',';
  let row: string[] = [];
  let field = '';
  let quoted = false;
  /** A quoted field has closed: only white space may follow it before the separator or the line's end. */
  let closed = false;
  let line = 1;
  let quoteLine = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch === '\n' || (ch === '\r' && body[i + 1] !== '\n')) line++;
    if (quoted) {
      if (ch === '"' && body[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') {
        quoted = false;
        closed = true;
      } else field += ch;
    } else if (ch === '"' && field === '' && !closed) {
      quoted = true;
      quoteLine = line;
    } else if (ch === separator) {
      row.push(field);
      field = '';
      closed = false;
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && body[i + 1] === '\n') {
        i++;
        line++;
      }
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      closed = false;
    } else if (closed) {
      // `"a"b`: glued on, the text would change the field silently (a quote inside one is written "").
      if (ch !== ' ' && ch !== '\t') return { ok: false, error: `line ${line}: text after the closing quote of a field (a " inside a quoted field is written "")` };
    } else field += ch;
  }
  if (quoted) return { ok: false, error: `line ${quoteLine}: a quoted field is not closed (a " is missing)` };
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return { ok: true, rows };
}

/** The prospects of a CSV file; the header row (naming `url`) is optional. */
export function prospectsFromCsv(text: string): ProspectListResult {
  const parsed = parseCsv(text);
  if (!parsed.ok) return { ok: false, errors: [parsed.error] };
  const rows = parsed.rows;
  const header = rows[0]?.map((h) => h.trim().toLowerCase()) ?? [];
  const hasHeader = header.includes('url') || header.includes('website') || header.includes('site');
  const col = (names: string[]) => header.findIndex((h) => names.includes(h));
  const urlCol = hasHeader ? col(['url', 'website', 'site']) : 0;
  const nameCol = hasHeader ? col(['name', 'site name', 'sitename']) : 1;
  const notesCol = hasHeader ? col(['notes', 'note', 'comment']) : 2;
  const entries: { line: number; entry: ProspectEntry }[] = [];
  rows.forEach((row, i) => {
    if (hasHeader && i === 0) return;
    if (row.every((cell) => cell.trim() === '')) return;
    const cell = (c: number) => (c >= 0 ? row[c]?.trim() || null : null);
    entries.push({ line: i + 1, entry: { url: cell(urlCol) ?? '', name: cell(nameCol), notes: cell(notesCol) } });
  });
  return checkEntries(entries);
}

export const prospectsFromEntries = (entries: readonly ProspectEntry[]): ProspectListResult =>
  checkEntries(entries.map((entry, i) => ({ line: i + 1, entry })), 'entry');

function checkEntries(entries: { line: number; entry: ProspectEntry }[], unit = 'line'): ProspectListResult {
  if (entries.length === 0) return { ok: false, errors: ['the list has no prospects'] };
  if (entries.length > MAX_PROSPECTS_PER_IMPORT) return { ok: false, errors: [`at most ${MAX_PROSPECTS_PER_IMPORT} prospects per import (${entries.length} given)`] };
  const errors: string[] = [];
  const byUrl = new Map<string, Prospect>();
  for (const { line, entry } of entries) {
    const url = normaliseProspectUrl(entry.url);
    if (!url) {
      const why = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(entry.url.trim()) ? 'carries credentials (user:password@)' : 'is not an https URL';
      errors.push(`${unit} ${line}: "${entry.url.slice(0, 100)}" ${why}`);
      continue;
    }
    if (url.length > 2000) {
      errors.push(`${unit} ${line}: the URL is longer than 2000 characters`);
      continue;
    }
    // Taken as the list gives them (a spreadsheet's export), made mailable: the name goes into the pitch and its To.
    const name = truncateText(cleanedText(entry.name ?? '').trim(), 200) || null;
    const notes = truncateText(cleanedText(entry.notes ?? '').trim(), 2000) || null;
    byUrl.set(url, { url, name, notes });
  }
  if (errors.length > 0) return { ok: false, errors: errors.slice(0, 20) };
  return { ok: true, prospects: [...byUrl.values()] };
}
