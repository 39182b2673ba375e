// The package's public surface for receivers of the service's webhooks. Plain JavaScript, with its
// types in index.d.ts: `import { verifyWebhookSignature } from 'outreach-integration-service'` works
// on Node.js alone, without the TypeScript loader the service itself runs under.
export { verifyWebhookSignature } from './processors/webhookDelivery/verifyWebhookSignature.js';
