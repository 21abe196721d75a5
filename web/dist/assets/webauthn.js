// WebAuthn in the browser: the server sends go-webauthn options with
// base64url fields; the browser wants ArrayBuffers, and the server wants the
// credential back as base64url JSON.

const b64u = {
  dec(s) {
    const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
    return Uint8Array.from(b, (c) => c.charCodeAt(0)).buffer;
  },
  enc(buf) {
    if (!buf) return null;
    let s = '';
    for (const x of new Uint8Array(buf)) s += String.fromCharCode(x);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  },
};

const ids = (list) => (list || []).map((c) => ({ ...c, id: b64u.dec(c.id) }));

// createCredential runs navigator.credentials.create for registration options.
export async function createCredential(options) {
  const pk = options.publicKey || options;
  const publicKey = { ...pk, challenge: b64u.dec(pk.challenge), user: { ...pk.user, id: b64u.dec(pk.user.id) }, excludeCredentials: ids(pk.excludeCredentials) };
  const c = await navigator.credentials.create({ publicKey });
  const r = c.response;
  return { id: c.id, rawId: b64u.enc(c.rawId), type: c.type, clientExtensionResults: c.getClientExtensionResults(),
    response: { clientDataJSON: b64u.enc(r.clientDataJSON), attestationObject: b64u.enc(r.attestationObject), transports: r.getTransports ? r.getTransports() : [] } };
}

// getAssertion runs navigator.credentials.get for assertion options.
export async function getAssertion(options) {
  const pk = options.publicKey || options;
  const publicKey = { ...pk, challenge: b64u.dec(pk.challenge), allowCredentials: ids(pk.allowCredentials) };
  const c = await navigator.credentials.get({ publicKey });
  const r = c.response;
  return { id: c.id, rawId: b64u.enc(c.rawId), type: c.type, clientExtensionResults: c.getClientExtensionResults(),
    response: { clientDataJSON: b64u.enc(r.clientDataJSON), authenticatorData: b64u.enc(r.authenticatorData), signature: b64u.enc(r.signature), userHandle: b64u.enc(r.userHandle) } };
}
