// chrome-har.js records pages/testdata/chrome-har.har: a HAR of one load of a pltlab-generated
// page built by the npm package chrome-har (harFromMessages, as sitespeed.io/browsertime do),
// with the response bodies fetched by Network.getResponseBody and written into
// response.content.text (content.encoding "base64" when CDP gives them base64-encoded).
//
// How the fixture was made (loopback only; chrome-har 1.3.1, chrome-remote-interface 0.34,
// Chromium 156 headless):
//
//   ./bin/pltlab serve --spec '1x20KB:css,2x30KB@o1,1x10KB:js' --addr 127.0.0.1:0 --json
//   # note addrs.h2 (127.0.0.1:PORT) and spki from its output
//   mkdir /tmp/ch && cd /tmp/ch && npm install chrome-har chrome-remote-interface
//   NODE_PATH=/tmp/ch/node_modules node pages/testdata/chrome-har.js 127.0.0.1:PORT SPKI out.har
//
// The page loads from https://plt.test/index.html (port 443 in the URLs; the host resolver rule
// maps plt.test and *.plt.test to the server's h2 address), so the HAR records hosts without ports.
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const CDP = require('chrome-remote-interface');
const { harFromMessages } = require('chrome-har');

const [addr, spki, out] = process.argv.slice(2);
if (!addr || !spki || !out) {
  console.error('usage: node chrome-har.js IP:PORT SPKI OUT.har');
  process.exit(2);
}
const port = 9300 + Math.floor(Math.random() * 500);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'pltlab-harother-profile-'));
const chrome = spawn(process.env.CHROMIUM || '/usr/bin/chromium', [
  '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
  `--remote-debugging-port=${port}`, '--remote-debugging-address=127.0.0.1',
  `--user-data-dir=${profile}`,
  `--host-resolver-rules=MAP plt.test ${addr}, MAP *.plt.test ${addr}`,
  `--ignore-certificate-errors-spki-list=${spki}`,
  '--disable-background-networking', '--disable-component-update',
  '--disable-features=OptimizationHints,MediaRouter,Translate',
  'about:blank',
], { stdio: 'ignore' });

function sleep(ms) { return new Promise(r => setTimeout(r, ms)); }

async function main() {
  let client;
  for (let i = 0; i < 100 && !client; i++) {
    try { client = await CDP({ port, host: '127.0.0.1' }); } catch (e) { await sleep(100); }
  }
  if (!client) throw new Error('no CDP connection');
  const { Network, Page } = client;
  const messages = [];
  const finished = new Set();
  const eventNames = [
    'Network.requestWillBeSent', 'Network.requestWillBeSentExtraInfo', 'Network.responseReceived',
    'Network.responseReceivedExtraInfo', 'Network.dataReceived', 'Network.loadingFinished',
    'Network.loadingFailed', 'Network.requestServedFromCache', 'Network.resourceChangedPriority',
    'Page.frameStartedLoading', 'Page.frameRequestedNavigation', 'Page.navigatedWithinDocument',
    'Page.domContentEventFired', 'Page.loadEventFired', 'Page.frameNavigated', 'Page.frameStoppedLoading',
  ];
  for (const method of eventNames) {
    client.on(method, params => {
      messages.push({ method, params });
      if (method === 'Network.loadingFinished') finished.add(params.requestId);
    });
  }
  await Network.enable();
  await Network.setCacheDisabled({ cacheDisabled: true });
  await Page.enable();
  const loaded = Page.loadEventFired();
  await Page.navigate({ url: 'https://plt.test/index.html' });
  await loaded;
  await sleep(1000); // late requests (fetches) and their loadingFinished
  const har = harFromMessages(messages, { includeTextFromResponseBody: false });
  for (const entry of har.log.entries) {
    if (!finished.has(entry._requestId)) continue;
    try {
      const { body, base64Encoded } = await Network.getResponseBody({ requestId: entry._requestId });
      entry.response.content.text = body;
      if (base64Encoded) entry.response.content.encoding = 'base64';
    } catch (e) {
      console.error(`no body for ${entry.request.url}: ${e.message}`);
    }
  }
  fs.writeFileSync(out, JSON.stringify(har, null, 2) + '\n');
  console.error(`${har.log.entries.length} entries written to ${out}`);
  await client.close();
}

main().catch(e => { console.error(e); process.exitCode = 1; }).finally(() => {
  chrome.kill('SIGTERM');
  setTimeout(() => { try { fs.rmSync(profile, { recursive: true, force: true }); } catch (e) {} process.exit(); }, 500);
});
