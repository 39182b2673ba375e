/** C0 control characters other than the white space ones (tab, line feed, vertical tab, form feed, carriage return): NUL among them. */
const CONTROL = /[\u0000-\u0008\u000E-\u001F]/;
const CONTROLS = new RegExp(CONTROL.source, 'g');
/** A UTF-16 surrogate without its other half: JSON can carry one, no mail or UTF-8 store can. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** Text that can be stored and mailed as given: no NUL or other control character, no lone surrogate. */
export const isCleanText = (v: string) => !CONTROL.test(v) && !LONE_SURROGATE.test(v);
export const CLEAN_TEXT_MESSAGE = 'must be text: no NUL or other control character, no unpaired surrogate';

/** Clean text on one line (a name, a keyword): no line break either (LF, CR, VT, FF, NEL, U+2028, U+2029), nor DEL or a C1 control. */
export const isOneLineText = (v: string) => isCleanText(v) && !/[\n\v\f\r\u007f-\u009f\u2028\u2029]/.test(v);
export const ONE_LINE_TEXT_MESSAGE = 'must be one line of text: no line break, NUL or other control character, no unpaired surrogate';

/** Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069). */
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;
const BIDI_CONTROLS = new RegExp(BIDI_CONTROL.source, 'g');

/**
 * A name others are asked to trust (an app on the consent page, an API key in a list): one line of
 * text without a bidirectional embedding, override or isolate (U+202A–U+202E, U+2066–U+2069): an app
 * named "\u202EelgooG" read "Google" on the consent page, and reversed the rest of the line.
 */
export const isDisplayName = (v: string) => isOneLineText(v) && !BIDI_CONTROL.test(v);
export const DISPLAY_NAME_MESSAGE = 'must be one line of text: no line break, NUL or other control character, bidirectional override or unpaired surrogate';
/** A name as a page shows it: without those characters (names stored before they were refused). */
export const withoutBidiControls = (v: string) => v.replace(BIDI_CONTROLS, '');

/** Blank: nothing but white space and invisible characters (control and format ones, a zero-width space say). */
export const isBlank = (v: string) => /^[\s\p{Cc}\p{Cf}]*$/u.test(v);

/** Text from outside that is taken as it comes (a mail from anyone): control characters dropped, a lone surrogate made U+FFFD. */
export const cleanedText = (v: string) => (isCleanText(v) ? v : v.replace(CONTROLS, '').replace(LONE_SURROGATES, '\uFFFD'));

/** The first `max` UTF-16 units of `v`, not ending inside a surrogate pair. */
export const truncateText = (v: string, max: number) => {
  if (v.length <= max) return v;
  const cut = v.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
};
