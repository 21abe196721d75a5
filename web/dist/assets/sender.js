// What to paste into the sending system for each webhook provider: the
// exact configuration, with the receiver URL and the secret filled in.

import { html, Copyable } from './ui.js';

export const providers = [
  ['alertmanager', 'Prometheus Alertmanager'], ['grafana', 'Grafana alerting'], ['datadog', 'Datadog'],
  ['sentry', 'Sentry'], ['pagerduty', 'PagerDuty'], ['github', 'GitHub'], ['gitlab', 'GitLab'],
  ['stripe', 'Stripe'], ['generic', 'Any JSON sender'],
];

// Providers that mint their own signing secret: it is pasted here instead.
export const senderMintsSecret = new Set(['stripe', 'pagerduty', 'sentry']);

const S = (secret) => secret || '<the secret shown when the webhook was created or rotated>';

// senderConfig returns [title, text, steps] for a provider.
export function senderConfig(provider, scheme, url, secret) {
  const s = S(secret);
  switch (provider) {
    case 'alertmanager':
      return ['alertmanager.yml', `receivers:
  - name: opsagent
    webhook_configs:
      - url: ${url}
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials: ${s}
route:
  receiver: opsagent`, 'Add the receiver to alertmanager.yml (or reference it from a sub-route) and reload Alertmanager.'];
    case 'grafana':
      return ['Grafana contact point (provisioning YAML)', `apiVersion: 1
contactPoints:
  - orgId: 1
    name: opsagent
    receivers:
      - uid: opsagent
        type: webhook
        settings:
          url: ${url}
          httpMethod: POST
          authorization_scheme: Bearer
          authorization_credentials: ${s}`, 'Or in the UI: Alerting → Contact points → New → Webhook; URL as above; Optional settings → Authorization header: scheme Bearer, credentials the secret.'];
    case 'datadog':
      return ['Datadog webhook (Integrations → Webhooks)', `Name:    opsagent
URL:     ${url}
Custom headers:
{"X-Webhook-Token": "${s}"}`, 'Then mention @webhook-opsagent in a monitor message.'];
    case 'github':
      return ['GitHub: Settings → Webhooks → Add webhook', `Payload URL:  ${url}
Content type: application/json
Secret:       ${s}
SSL verification: enabled`, 'Pick the events to send; GitHub signs each delivery with X-Hub-Signature-256.'];
    case 'gitlab':
      return ['GitLab: Settings → Webhooks → Add new webhook', `URL:          ${url}
Secret token: ${s}`, 'Tick the triggers to send; GitLab sends the token as X-Gitlab-Token.'];
    case 'stripe':
      return ['Stripe: Developers → Webhooks → Add endpoint', `Endpoint URL: ${url}`, 'Stripe shows a signing secret (whsec_…) for the endpoint: paste it under "Use the sender\'s secret" and save.'];
    case 'pagerduty':
      return ['PagerDuty: Integrations → Generic Webhooks (v3) → New webhook', `Webhook URL: ${url}`, 'PagerDuty shows a signing secret once: paste it under "Use the sender\'s secret" and save.'];
    case 'sentry':
      return ['Sentry: Settings → Developer settings → Internal integration', `Webhook URL: ${url}`, 'Copy the integration\'s client secret and paste it under "Use the sender\'s secret".'];
    default:
      return ['Any sender (curl)', genericCurl(scheme, url, s), 'Send JSON with a POST; the secret is checked with the scheme above.'];
  }
}

function genericCurl(scheme, url, s) {
  const body = `'{"title":"disk almost full","severity":"warning"}'`;
  switch (scheme) {
    case 'header_token': return `curl -X POST ${url} -H 'Content-Type: application/json' -H 'X-Webhook-Token: ${s}' -d ${body}`;
    case 'hmac_sha256': return `BODY=${body}
SIG=$(printf %s "$BODY" | openssl dgst -sha256 -hmac '${s}' | sed 's/^.* //')
curl -X POST ${url} -H 'Content-Type: application/json' -H "X-Webhook-Signature: sha256=$SIG" -d "$BODY"`;
    case 'none': return `curl -X POST ${url} -H 'Content-Type: application/json' -d ${body}`;
    default: return `curl -X POST ${url} -H 'Content-Type: application/json' -H 'Authorization: Bearer ${s}' -d ${body}`;
  }
}

// SenderConfig shows the URL, the secret (when it is shown once) and the
// provider's configuration, each with a copy button.
export function SenderConfig({ hook, secret }) {
  const [title, text, steps] = senderConfig(hook.provider, hook.scheme, hook.url, secret);
  return html`<div class="sender" id="sender-config">
    <${Copyable} label="Receiver URL" id="webhook-url" value=${hook.url} />
    ${secret ? html`<${Copyable} label="Secret (shown once: copy it now)" id="webhook-secret" value=${secret} />` : null}
    <h3>${title}</h3>
    <${Copyable} label=${'Configuration for ' + hook.provider} id="sender-text" value=${text} multiline />
    <p class="muted">${steps}</p></div>`;
}
