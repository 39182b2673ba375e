/**
 * A small strict parser of the Prometheus text exposition format (0.0.4), for the tests: every line
 * is a `# HELP`, a `# TYPE` or a sample `name{label="value",...} value`; anything else throws.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** As Prometheus reads values (Go's ParseFloat): Inf and NaN in any case. */
function parseValue(v: string): number {
  if (/^\+?inf$/i.test(v)) return Infinity;
  if (/^-inf$/i.test(v)) return -Infinity;
  if (/^nan$/i.test(v)) return NaN;
  if (!/^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(v)) throw new Error(`bad sample value ${v}`);
  return Number(v);
}

function parseLabels(s: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < s.length) {
    const eq = s.indexOf('=', i);
    if (eq < 0) throw new Error(`bad labels ${s}`);
    const name = s.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name ${name}`);
    if (s[eq + 1] !== '"') throw new Error(`label ${name}: value not quoted`);
    let j = eq + 2;
    let value = '';
    for (; j < s.length && s[j] !== '"'; j++) {
      if (s[j] === '\\') {
        const next = s[++j];
        value += next === 'n' ? '\n' : next === '\\' ? '\\' : next === '"' ? '"' : (() => { throw new Error(`bad escape \\${next}`); })();
      } else value += s[j];
    }
    if (s[j] !== '"') throw new Error(`label ${name}: unterminated value`);
    if (name in labels) throw new Error(`label ${name} repeated`);
    labels[name] = value;
    j++;
    if (j < s.length && s[j] !== ',') throw new Error(`bad label separator in ${s}`);
    i = j + 1;
  }
  return labels;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (sample: string) => {
    for (const suffix of ['_bucket', '_sum', '_count', '']) {
      if (sample.endsWith(suffix)) {
        const f = families.get(sample.slice(0, sample.length - suffix.length));
        if (f && (suffix === '' || f.type === 'histogram' || f.type === 'summary')) return f;
      }
    }
    throw new Error(`sample ${sample} before its # TYPE`);
  };
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    let m: RegExpExecArray | null;
    if ((m = /^# HELP (\S+) (.*)$/.exec(line))) {
      if (!NAME.test(m[1]!)) throw new Error(`bad metric name ${m[1]}`);
      const f = families.get(m[1]!) ?? { name: m[1]!, help: '', type: 'untyped' as const, samples: [] };
      f.help = m[2]!;
      families.set(f.name, f);
    } else if ((m = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line))) {
      const f = families.get(m[1]!) ?? { name: m[1]!, help: '', type: 'untyped' as const, samples: [] };
      if (f.samples.length) throw new Error(`# TYPE ${m[1]} after its samples`);
      f.type = m[2] as Family['type'];
      families.set(f.name, f);
    } else if ((m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)( -?\d+)?$/.exec(line))) {
      familyOf(m[1]!).samples.push({ name: m[1]!, labels: m[2] ? parseLabels(m[2]) : {}, value: parseValue(m[3]!) });
    } else if (!line.startsWith('#')) throw new Error(`not a Prometheus text line: ${line}`);
  }
  return families;
}
