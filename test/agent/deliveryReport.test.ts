import { readFileSync } from 'node:fs';
import t from 'tap';
import { classifyDeliveryReport, parseFieldBlocks } from '../../src/adapters/mail/deliveryReport.ts';

const sample = (name: string) => readFileSync(new URL(`../fixtures/deliveryReports/${name}.eml`, import.meta.url), 'utf8');
const crlf = (text: string) => text.replace(/\r?\n/g, '\r\n');

t.test('RFC 3464 delivery status notifications', async (t) => {
  t.test('a Postfix bounce (550 5.1.1 user unknown) is a hard bounce of the final recipient', async (t) => {
    t.same(await classifyDeliveryReport(sample('postfix-user-unknown')), {
      kind: 'bounce',
      recipients: [{ email: 'jane.doe@prospect.test', status: '5.1.1', action: 'failed' }],
    });
  });
  t.test('the same report with CRLF line ends, as a Buffer, reads the same', async (t) => {
    t.same(await classifyDeliveryReport(Buffer.from(crlf(sample('postfix-user-unknown')))), {
      kind: 'bounce',
      recipients: [{ email: 'jane.doe@prospect.test', status: '5.1.1', action: 'failed' }],
    });
  });
  t.test('a Gmail "Address not found" notification (nested related/alternative parts, folded fields)', async (t) => {
    t.same(await classifyDeliveryReport(sample('gmail-no-such-user')), {
      kind: 'bounce',
      recipients: [{ email: 'mark.owens@prospect-agency.test', status: '5.1.1', action: 'failed' }],
    });
  });
  t.test('an Exim bounce with two failed recipients lists both', async (t) => {
    t.same(await classifyDeliveryReport(sample('exim-two-failed')), {
      kind: 'bounce',
      recipients: [
        { email: 'sam@old-domain.test', status: '5.0.0', action: 'failed' },
        { email: 'info@old-domain.test', status: '5.0.0', action: 'failed' },
      ],
    });
  });
  t.test('a Postfix delay warning (Action: delayed, Status: 4.4.1) is not a bounce', async (t) => {
    t.equal(await classifyDeliveryReport(sample('postfix-delayed')), null);
  });
  t.test('a report mixing a permanent failure and a delay names only the permanent failure', async (t) => {
    const twoBlocks = sample('postfix-user-unknown').replace(
      'Final-Recipient: rfc822; jane.doe@prospect.test',
      'Final-Recipient: rfc822; lena@slow-host.test\nAction: delayed\nStatus: 4.4.1\nWill-Retry-Until: Tue, 20 Jan 2026 12:00:03 +0000 (UTC)\n\nFinal-Recipient: rfc822; jane.doe@prospect.test',
    );
    t.same(await classifyDeliveryReport(twoBlocks), {
      kind: 'bounce',
      recipients: [{ email: 'jane.doe@prospect.test', status: '5.1.1', action: 'failed' }],
    });
  });
  t.test('a failure with a temporary status (4.4.7 message expired) is not a hard bounce', async (t) => {
    const expired = sample('postfix-user-unknown').replace('Status: 5.1.1', 'Status: 4.4.7');
    t.equal(await classifyDeliveryReport(expired), null);
  });
  t.test('a successful delivery notification (Action: delivered, Status: 2.0.0) is not a bounce', async (t) => {
    const delivered = sample('postfix-user-unknown').replace('Action: failed', 'Action: delivered').replace('Status: 5.1.1', 'Status: 2.0.0');
    t.equal(await classifyDeliveryReport(delivered), null);
  });
  t.test('a status with a comment, angle brackets and upper-case field names are read', async (t) => {
    const variant = sample('postfix-user-unknown')
      .replace('Final-Recipient: rfc822; jane.doe@prospect.test', 'FINAL-RECIPIENT: RFC822; <jane.doe@prospect.test>')
      .replace('Action: failed', 'ACTION: Failed')
      .replace('Status: 5.1.1', 'Status: 5.1.1 (bad destination mailbox address)');
    t.same(await classifyDeliveryReport(variant), {
      kind: 'bounce',
      recipients: [{ email: 'jane.doe@prospect.test', status: '5.1.1', action: 'failed' }],
    });
  });
  t.test('without a Status field, the enhanced code of the Diagnostic-Code is used', async (t) => {
    const noStatus = sample('postfix-user-unknown').replace('Status: 5.1.1\n', '');
    t.same(await classifyDeliveryReport(noStatus), {
      kind: 'bounce',
      recipients: [{ email: 'jane.doe@prospect.test', status: '5.1.1', action: 'failed' }],
    });
  });
  t.test('a recipient given only as Original-Recipient is still found', async (t) => {
    const original = sample('postfix-user-unknown').replace('Final-Recipient: rfc822; jane.doe@prospect.test\n', '');
    t.same(await classifyDeliveryReport(original), {
      kind: 'bounce',
      recipients: [{ email: 'jane.doe@prospect.test', status: '5.1.1', action: 'failed' }],
    });
  });
});

t.test('RFC 5965 ARF feedback reports', async (t) => {
  t.test('a Yahoo-style abuse report names the complainant from Original-Rcpt-To', async (t) => {
    t.same(await classifyDeliveryReport(sample('yahoo-arf-abuse')), { kind: 'complaint', email: 'Priya.Shah@yahoo.test', feedbackType: 'abuse' });
  });
  t.test('a report without Original-Rcpt-To names the To of the reported message (text/rfc822-headers)', async (t) => {
    t.same(await classifyDeliveryReport(sample('outlook-arf-no-rcpt-to')), { kind: 'complaint', email: 'tom.becker@hotmail.test', feedbackType: 'abuse' });
  });
  t.test('the same fallback works on a full message/rfc822 part', async (t) => {
    const noRcptTo = sample('yahoo-arf-abuse').replace('Original-Rcpt-To: <Priya.Shah@yahoo.test>\n', '');
    t.same(await classifyDeliveryReport(noRcptTo), { kind: 'complaint', email: 'Priya.Shah@yahoo.test', feedbackType: 'abuse' });
  });
  t.test('fraud and virus reports are complaints too', async (t) => {
    for (const type of ['fraud', 'virus']) {
      t.match(await classifyDeliveryReport(sample('yahoo-arf-abuse').replace('Feedback-Type: abuse', `Feedback-Type: ${type}`)), { kind: 'complaint', feedbackType: type });
    }
  });
  t.test('a not-spam report and an authentication-failure report are not complaints', async (t) => {
    for (const type of ['not-spam', 'auth-failure']) {
      t.equal(await classifyDeliveryReport(sample('yahoo-arf-abuse').replace('Feedback-Type: abuse', `Feedback-Type: ${type}`)), null, type);
    }
  });
  t.test('a report whose recipient the provider redacted gives no address: null', async (t) => {
    const redacted = sample('outlook-arf-no-rcpt-to').replace('To: "Tom Becker" <tom.becker@hotmail.test>', 'To: redacted');
    t.equal(await classifyDeliveryReport(redacted), null);
  });
});

t.test('ordinary mail is null', async (t) => {
  t.equal(await classifyDeliveryReport(sample('ordinary-pitch')), null, 'a pitch, even one quoting DSN-like lines');
  t.equal(await classifyDeliveryReport('From: a@b.test\r\nTo: c@d.test\r\nSubject: hi\r\n\r\nhello\r\n'), null, 'a bare text message');
  t.equal(await classifyDeliveryReport(''), null, 'nothing at all');
});

t.test('parseFieldBlocks: blank lines separate blocks, folded lines continue, repeated fields keep every value', async (t) => {
  const blocks = parseFieldBlocks('Reporting-MTA: dns; a.test\r\n\r\nFinal-Recipient: rfc822; x@y.test\r\nDiagnostic-Code: smtp; 550 no\r\n  such user\r\nX-Note: one\r\nx-note: two\r\n\r\n\r\n');
  t.equal(blocks.length, 2);
  t.same([...blocks[0]!.entries()], [['reporting-mta', ['dns; a.test']]]);
  t.same(blocks[1]!.get('diagnostic-code'), ['smtp; 550 no such user']);
  t.same(blocks[1]!.get('x-note'), ['one', 'two']);
});
