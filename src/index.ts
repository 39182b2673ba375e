/** The package's public surface for receivers of the service's webhooks. */
export { verifyWebhookSignature, type VerifyOptions } from './processors/webhookDelivery/verifyWebhookSignature.ts';
