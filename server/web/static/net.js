// The one module that knows the wire protocol (docs/PROTOCOL.md, server/protocol/). The rest
// of the page calls the verbs below and receives named events with the server's own views;
// when the protocol changes, this file is where the page changes.
//
// Connection life: open /ws, send hello (with the resume token kept in localStorage, if any),
// and on any drop reconnect with exponential backoff. After every (re)connect the server sends
// welcome and then the full state of each room the player sits in, so the page re-renders
// from that and never patches a picture it might have missed events for.

export const PROTOCOL_VERSION = 1;
const TOKEN_KEY = "discus.resume";
const NAME_KEY = "discus.name";
/** How a session token (an account's ``resume``) starts; a guest's resume token does not. */
const SESSION_PREFIX = "discus_session_";

export class Client {
  /**
   * ``on(event, data)`` receives: status {state, retryIn}, welcome (Welcome), rooms
   * (RoomSummary[]), room_state {room: RoomView, you}, move_made (MoveMade), room_event
   * (RoomEvent), ai_thinking (AiThinking), game_over (GameOver), history (PastGame[]),
   * game_record (GameReplay), error (Error), and the other server messages by their type
   * (challenge, challenge_sent, challenge_declined, ...) as sent.
   */
  constructor(on) {
    this.on = on;
    this.ws = null;
    this.retry = 0;
    this.timer = null;
    this.queue = [];
    this.ready = false;
    this.nextId = 1;
  }

  get name() { return localStorage.getItem(NAME_KEY) || ""; }

  connect() {
    clearTimeout(this.timer);
    const url = new URL("/ws", location.href);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(url);
    this.ws = ws;
    this.ready = false;
    this.on("status", { state: this.retry ? "reconnecting" : "connecting" });
    ws.onopen = () => {
      const hello = { type: "hello", version: PROTOCOL_VERSION };
      const resume = localStorage.getItem(TOKEN_KEY);
      if (resume) hello.resume = resume;
      if (this.name) hello.name = this.name;
      this.send(hello);
    };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (this.ws === ws) this.receive(msg);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ready = false;
      // Backoff 0.5 s, 1 s, 2 s ... capped at 15 s, with jitter so a restarted server is not
      // hit by every open page in the same instant.
      let delay = Math.min(15000, 500 * 2 ** this.retry) * (0.75 + Math.random() / 2);
      // 1013: the server sheds newcomers while saturated; give it a few seconds at least.
      if (ev.code === 1013) delay = Math.max(delay, 3000 + Math.random() * 2000);
      // 1012: a node of a cluster is stopping and another runs the game: come back now.
      if (ev.code === 1012) delay = Math.random() * 300;
      this.retry += 1;
      this.on("status", { state: "offline", code: ev.code, reason: ev.reason, retryIn: delay });
      this.timer = setTimeout(() => this.connect(), delay);
    };
  }

  /** Drop the connection and come back at once (used to resync after a stale move). */
  resync() {
    this.retry = 0;
    const ws = this.ws;
    this.ws = null;
    if (ws) { ws.onclose = null; ws.close(); }
    this.connect();
  }

  send(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  /** Sent now when greeted, else right after the next welcome (so clicks are not lost). */
  request(msg) {
    msg.id = this.nextId++;
    if (this.ready) this.send(msg); else this.queue.push(msg);
    return msg.id;
  }

  receive(msg) {
    if (msg.type === "welcome") {
      localStorage.setItem(TOKEN_KEY, msg.resume);
      this.ready = true;
      this.retry = 0;
      this.on("status", { state: "online" });
      this.on("welcome", msg);
      // hello's room_state messages follow welcome; the pong to this ping comes after them,
      // so "synced" means the page knows every room it sits in.
      this.syncId = this.request({ type: "ping" });
      for (const m of this.queue.splice(0)) this.send(m);
      return;
    }
    if (msg.type === "pong") {
      if (msg.id === this.syncId) this.on("synced", {});
      return;
    }
    if (msg.type === "error" && msg.code === "bad_resume_token") {
      // The server forgot us (or the token is from another server): start as a new guest.
      localStorage.removeItem(TOKEN_KEY);
      this.resync();
      return;
    }
    if (msg.type === "signed_in") {
      // The session token is this browser's way back in as the account: keep it where the
      // guest's resume token was, and say hello with it now.
      localStorage.setItem(TOKEN_KEY, msg.session);
      this.on("signed_in", msg);
      this.resync();
      return;
    }
    if (msg.type === "signed_out") {
      // The server closes this connection next; come back as a new guest.
      this.forget();
      this.on("signed_out", msg);
      this.resync();
      return;
    }
    if (msg.type === "rooms") { this.on("rooms", msg.rooms); return; }
    if (msg.type === "history") { this.on("history", msg.games); return; }
    if (msg.type === "game_record") { this.on("game_record", msg.record); return; }
    this.on(msg.type, msg);
  }

  /** Whether this browser is signed in to an account (it says hello with a session). */
  get signedIn() { return (localStorage.getItem(TOKEN_KEY) || "").startsWith(SESSION_PREFIX); }

  /** Make this guest an account (same player, same games): answered by "signed_in". */
  signUp(name, password) { return this.request({ type: "sign_up", name, password }); }
  /** Sign in to an account: answered by "signed_in", then the page says hello as it. */
  signIn(name, password) { return this.request({ type: "sign_in", name, password }); }
  /** End this browser's session (``everywhere``: every session of the account). */
  signOut(everywhere = false) { return this.request({ type: "sign_out", everywhere }); }
  /** New password for this account: answered by "password_changed"; the account's other
   * browsers are signed out, this one stays in. */
  changePassword(password, newPassword) {
    return this.request({ type: "change_password", password, new_password: newPassword });
  }

  /** Come back next time as a new player (the resume token is dropped). */
  forget() { localStorage.removeItem(TOKEN_KEY); }

  setName(name) {
    if (name) localStorage.setItem(NAME_KEY, name); else localStorage.removeItem(NAME_KEY);
  }

  listRooms() { return this.request({ type: "list_rooms" }); }
  /** How the AI workers are doing (warm or still compiling): answered by "stats". */
  stats() { return this.request({ type: "stats" }); }
  /** opponent: {kind: "ai", level} | {kind: "friend"} | {kind: "open"}; seat 0, 1 or null. */
  create(game, opponent, seat, timeControl = null) {
    return this.request({ type: "create_room", game, opponent, seat, time_control: timeControl || null });
  }
  join(room) { return this.request({ type: "join_room", room }); }
  spectate(room) { return this.request({ type: "spectate", room }); }
  move(room, ply, move) { return this.request({ type: "move", room, ply, move }); }
  resign(room) { return this.request({ type: "resign", room }); }
  offerRematch(room) { return this.request({ type: "offer_rematch", room }); }
  acceptRematch(room) { return this.request({ type: "accept_rematch", room }); }
  claim(room) { return this.request({ type: "claim", room }); }
  takeBack(room) { return this.request({ type: "take_back", room }); }
  offerDraw(room) { return this.request({ type: "offer_draw", room }); }
  answerDraw(room, accept) { return this.request({ type: "answer_draw", room, accept }); }
  leave(room) { return this.request({ type: "leave", room }); }
  /** Your finished games (or ``player``'s), newest first: answered by "history". */
  listHistory(player = null) { return this.request(player ? { type: "list_history", player } : { type: "list_history" }); }
  /** One stored game with the board after every ply: answered by "game_record". */
  getGame(gameId) { return this.request({ type: "get_game", game_id: gameId }); }
  /** The engine's review of a finished game: answered by "review" (once computed). */
  requestReview(gameId) { return this.request({ type: "request_review", game_id: gameId }); }
  /** Every legal move's value in the position after ``moves``: answered by "analysis". */
  analyse(game, moves) { return this.request({ type: "analyse", game, moves }); }
  /** A game's best rated players, provisional ones left out: answered by "leaderboard". */
  getLeaderboard(game) { return this.request({ type: "get_leaderboard", game, provisional: false }); }
  /** A player's ratings, rating history and recent games (null: yours): answered by "profile". */
  getProfile(player = null) { return this.request(player ? { type: "get_profile", player } : { type: "get_profile" }); }
  /** Ask ``player`` (an id, a bot's name, or an online player's name) for a game, your seat
   * 0 (first), 1 or null (random): answered by "challenge_sent", later the room's
   * "room_state" or "challenge_declined". */
  challenge(player, game, timeControl = null, seat = null) {
    return this.request({ type: "challenge", player, game, seat, time_control: timeControl || null });
  }
  /** Answer a "challenge" offer: accepting is answered by the new room's "room_state". */
  acceptChallenge(challenge) { return this.request({ type: "accept_challenge", challenge }); }
  declineChallenge(challenge, reason = "") { return this.request({ type: "decline_challenge", challenge, reason }); }
}
