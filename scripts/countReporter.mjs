// A tap reporter (`reporter` in .taprc): shows tap's raw TAP output as it comes and ends with one
// line `N passed, N failed`, which the CI reads.
//
// tap loads a module whose default export is a stream class, pipes the run's TAP into it and this
// stream's output to stdout. The TAP is parsed with tap-parser, the parser tap itself uses.
//
// What is counted: leaf test points, as tap's own `# { total, pass, fail }` line does. A leaf is an
// assertion or a subtest that made no assertions of its own (a given/when/then test that throws on
// a mismatch). Skipped and todo points are counted apart and appear in neither number. A subtest
// that fails on its own account (a crash, a timeout, a plan mismatch, a test file exiting non-zero)
// while none of its assertions failed counts as one failed point, so a broken test file can never
// read as green; and if the run as a whole failed (a bail-out, say) with no failed point found,
// that counts as one failure.
//
// Just before that line it lists every failed point by its full name (file > subtest > assertion),
// so a log's last lines say which tests failed even when only its tail is kept.
import { PassThrough } from 'node:stream';
import { Parser } from 'tap-parser';

export default class CountReporter extends PassThrough {
  #counts = { passed: 0, failed: 0, skipped: 0, todo: 0 };
  #parser = new Parser();
  #summary = null;
  #failures = [];

  constructor() {
    super();
    this.#count(this.#parser);
    this.#parser.on('complete', (results) => (this.#summary = results));
  }

  _transform(chunk, encoding, callback) {
    this.#parser.write(chunk);
    callback(null, chunk);
  }

  _flush(callback) {
    this.#parser.end();
    const c = this.#counts;
    if (this.#summary && !this.#summary.ok && c.failed === 0) {
      this.push('# the run failed without a failing test point; counting it as one failure\n');
      c.failed = 1;
    }
    if (this.#failures.length > 0) {
      this.push(`# failed (${this.#failures.length}):\n${this.#failures.map((name) => `#   ${name}\n`).join('')}`);
    }
    this.push(`# skipped: ${c.skipped}, todo: ${c.todo}\n${c.passed} passed, ${c.failed} failed\n`);
    callback();
  }

  #points() {
    const c = this.#counts;
    return c.passed + c.failed + c.skipped + c.todo;
  }

  /** Counts the points of one (sub)test's parser; its subtests get their own parsers. */
  #count(parser) {
    // The subtest whose closing point comes next: in TAP that point directly follows its body.
    let child = null;
    parser.on('child', (p) => {
      child = { pointsBefore: this.#points(), failedBefore: this.#counts.failed };
      this.#count(p);
    });
    parser.on('assert', (result) => {
      const closing = child;
      child = null;
      if (closing && this.#points() > closing.pointsBefore) {
        // The point closing a subtest whose assertions are already counted.
        if (!result.ok && this.#counts.failed === closing.failedBefore) this.#failed(result);
        return;
      }
      if (result.skip) this.#counts.skipped += 1;
      else if (result.todo) this.#counts.todo += 1;
      else if (result.ok) this.#counts.passed += 1;
      else this.#failed(result);
    });
  }

  #failed(result) {
    this.#counts.failed += 1;
    this.#failures.push((result.fullname || result.name || '(unnamed)').replace(/\s+/g, ' '));
  }
}
