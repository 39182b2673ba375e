export { verifyWebhookSignature, type VerifyOptions } from './processors/webhookDelivery/verifyWebhookSignature.js';
