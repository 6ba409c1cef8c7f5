// Drives the official npm clients of the historical platform against a running platform, the
// way their published examples do: the chat-bot tutorial (dev.mixer.com/tutorials/chatbot,
// mixer/developers), the @mixer/client-node services, @mixer/shortcode-oauth's OAuthClient and
// carina's Constellation subscription (carina README, mixer/developers
// src/tutorials/code/node/constellation).
// Each step prints one JSON line; tests/test_replay_npm.py reads them. Only the base address,
// client id and token are ours.
'use strict';
const Mixer = require('@mixer/client-node');
const { OAuthClient } = require('@mixer/shortcode-oauth');
const { Carina } = require('carina');
const ws = require('ws');
const readline = require('readline');

const [command, api, arg] = process.argv.slice(2);
const out = (step, value) => console.log(JSON.stringify({ step, value }));
const bounded = (promise, what) => Promise.race([
  promise,
  new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), 10000)),
]);

function client(token) {
  const c = new Mixer.Client(new Mixer.DefaultRequestRunner());
  c.setUrl('api', api);
  if (token) {
    c.use(new Mixer.OAuthProvider(c, {
      tokens: { access: token, expires: Date.now() + 365 * 24 * 60 * 60 * 1000 },
    }));
  }
  return c;
}

async function rest() {
  const c = client();
  const channel = (await c.channel.getChannel('streamer')).body;
  out('channel', channel);
  out('broadcast', (await c.channel.getBroadcast(channel.id)).body);
  const chat = (await c.chat.join(channel.id)).body;
  out('chat', chat);
  const socket = new Mixer.Socket(ws, chat.endpoints).boot();
  out('anonymousAuth', await bounded(socket.auth(channel.id), 'anonymous auth'));
  socket.close();
}

async function bot() {
  // The tutorial's flow: users/current, chats/{channel.id}, Socket.auth, msg.
  const c = client(arg);
  const userInfo = (await c.request('GET', 'users/current')).body;
  out('user', userInfo);
  const chat = (await new Mixer.ChatService(c).join(userInfo.channel.id)).body;
  out('chat', chat);
  const socket = new Mixer.Socket(ws, chat.endpoints).boot();
  socket.on('error', error => out('error', String(error)));
  const heard = new Promise(resolve => socket.on('ChatMessage', data => {
    // The tutorial reads message[0].data of every message.
    resolve({ first: data.message.message[0].data, data });
  }));
  out('auth', await bounded(socket.auth(userInfo.channel.id, userInfo.id, chat.authkey), 'auth'));
  out('msg', await bounded(socket.call('msg', [':) !ping']), 'msg'));
  out('heard', await bounded(heard, 'ChatMessage'));
  out('history', await bounded(socket.call('history', [5]), 'history'));
  socket.close();
}

async function shortcode() {
  const oauth = new OAuthClient({ clientId: arg, scopes: ['chat:connect', 'chat:chat'], host: api + '/' });
  const code = await oauth.getCode();
  out('code', { code: code.code, expiresIn: code.expiresIn });
  await new Promise(resolve => readline.createInterface({ input: process.stdin }).once('line', resolve));
  const tokens = await bounded(code.waitForAccept(), 'waitForAccept');
  out('tokens', { granted: tokens.granted(['chat:connect', 'chat:chat']), expired: tokens.expired() });
  const c = client(tokens.data.accessToken);
  out('user', (await c.request('GET', 'users/current')).body);
  const refreshed = await oauth.refresh(tokens);
  out('refreshed', { changed: refreshed.data.accessToken !== tokens.data.accessToken });
  process.stdin.destroy();
}

async function constellation() {
  // The README's Node example, with our web root as `url` (the one option a client changes);
  // `arg` is the channel id whose updates it follows.
  Carina.WebSocket = ws;
  const ca = new Carina({ url: api, isBot: true }).open();
  ca.on('error', error => out('error', String(error)));
  // carina resolves subscribe() at once; the reply to its livesubscribe says it took effect.
  ca.socket.on('message', message => {
    const packet = JSON.parse(message.data);
    if (packet.type === 'event' && packet.event === 'hello') out('hello', packet.data);
    if (packet.type === 'reply') out('subscribed', packet);
  });
  const update = new Promise(resolve => ca.subscribe(`channel:${arg}:update`, resolve));
  out('update', await bounded(update, 'channel update'));
  ca.close();
}

({ rest, bot, shortcode, constellation })[command]().then(
  () => process.exit(0),
  error => { out('failed', String(error && error.stack || error)); process.exit(1); },
);
