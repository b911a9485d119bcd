// The capture page: camera preview, one guidance reply per preview frame over the live WebSocket, then
// one streamed check with the session token. Opened as /capture#session=<token>&subject=<reference>:
// the token travels in the fragment, which browsers never send to a server.
const FRAME_INTERVAL_MS = 200; // at most 5 frames a second (spec 4.4)
const PREVIEW_MAX_SIDE = 640; // preview frames are at most 640 px on the long side
const READY_TO_CAPTURE = 2; // ready replies before capturing on its own

const $ = (id) => document.getElementById(id);
const ui = {
  status: $("status"),
  viewer: $("viewer"),
  video: $("preview"),
  overlay: $("overlay"),
  cue: $("cue"),
  capture: $("capture"),
  result: $("result"),
  events: $("events"),
  decision: $("decision"),
};

const DECISION_TEXT = {
  AUTO_APPROVE: "Approved",
  APPROVE: "Approved",
  FLAG: "Needs a review",
  FAILED: "Did not match",
  UNREADABLE: "The signature could not be read: try again in better light",
  NO_SIGNATURE: "No signature was found",
};

function setState(state, text) {
  document.body.dataset.state = state;
  if (text !== undefined) ui.status.textContent = text;
}

function fail(text) {
  setState("error", text);
  ui.capture.disabled = true;
}

function readFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  // Take the token out of the address bar, so it is not kept in history or shown on screen.
  history.replaceState(null, "", location.pathname);
  return { token: params.get("session"), subject: params.get("subject") };
}

async function openCamera() {
  try {
    return await navigator.mediaDevices.getUserMedia({
      video: { facingMode: { ideal: "environment" }, width: { ideal: 1280 }, height: { ideal: 720 } },
      audio: false,
    });
  } catch (err) {
    if (err && (err.name === "NotAllowedError" || err.name === "SecurityError")) {
      throw new Error(
        "Camera access was refused. To capture your signature, allow this page to use the camera " +
          "(in your browser's site settings), then reload the page.",
      );
    }
    if (err && (err.name === "NotFoundError" || err.name === "OverconstrainedError")) {
      throw new Error("No camera was found on this device. Open this link on a phone with a camera.");
    }
    throw new Error("The camera could not be started. Close other apps that use it, then reload the page.");
  }
}

/** Draws the current video frame into a canvas at most `maxSide` px on the long side. */
function grab(maxSide) {
  const v = ui.video;
  const scale = Math.min(1, maxSide / Math.max(v.videoWidth, v.videoHeight));
  const canvas = document.createElement("canvas");
  canvas.width = Math.round(v.videoWidth * scale);
  canvas.height = Math.round(v.videoHeight * scale);
  canvas.getContext("2d").drawImage(v, 0, 0, canvas.width, canvas.height);
  return canvas;
}

function jpeg(canvas, quality) {
  return new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", quality));
}

function drawBox(signature, frame) {
  const o = ui.overlay;
  o.width = o.clientWidth;
  o.height = o.clientHeight;
  const ctx = o.getContext("2d");
  ctx.clearRect(0, 0, o.width, o.height);
  if (!signature || !frame) return;
  const sx = o.width / frame.width;
  const sy = o.height / frame.height;
  const b = signature.box;
  ctx.lineWidth = 3;
  ctx.strokeStyle = ui.cue.dataset.cue === "ready" ? "#5fd38d" : "#ffd54f";
  ctx.strokeRect(b.x * sx, b.y * sy, b.w * sx, b.h * sy);
}

function live(token, onReady) {
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/sig/live`;
  const ws = new WebSocket(url, ["service.session", token]);
  ws.binaryType = "arraybuffer";
  const sent = []; // frames awaiting their reply, in order: { preview, full }
  let best = null;
  let readyCount = 0;
  let timer = null;
  let stopped = false;

  async function sendFrame() {
    if (stopped || ws.readyState !== WebSocket.OPEN || sent.length > 0 || !ui.video.videoWidth) return;
    const preview = grab(PREVIEW_MAX_SIDE);
    const full = grab(4096);
    const blob = await jpeg(preview, 0.8);
    if (!blob || stopped) return;
    sent.push({ preview, full });
    ws.send(await blob.arrayBuffer());
  }

  ws.addEventListener("open", () => {
    setState("live", "Point the camera at your signature on paper.");
    ui.capture.disabled = false;
    timer = setInterval(sendFrame, FRAME_INTERVAL_MS);
  });
  ws.addEventListener("message", (e) => {
    const reply = JSON.parse(e.data);
    const frame = sent.shift();
    if (reply.type === "error") {
      // Too fast or unreadable: the next frame will do; the connection stays open.
      return;
    }
    ui.cue.textContent = reply.message;
    ui.cue.dataset.cue = reply.cue;
    drawBox(reply.signature, frame?.preview);
    if (reply.ready && frame) {
      readyCount += 1;
      if (!best || reply.quality.score > best.score) best = { score: reply.quality.score, canvas: frame.full };
      if (readyCount >= READY_TO_CAPTURE) onReady(best.canvas);
    } else {
      readyCount = 0;
    }
  });
  ws.addEventListener("close", (e) => {
    clearInterval(timer);
    if (stopped) return;
    if (e.code === 1008) fail("This capture link is no longer valid. Ask for a new link.");
    else if (e.code === 1000) fail("The camera session ended. Reload the page to start again.");
    else fail("The connection to the service was lost. Reload the page to try again.");
  });
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      ws.close(1000, "captured");
    },
  };
}

function addEvent(text) {
  const li = document.createElement("li");
  li.textContent = text;
  ui.events.append(li);
}

function describeEvent(name, data) {
  switch (name) {
    case "received":
      return "Received";
    case "quality":
      return `Image quality ${Math.round((data.score ?? 0) * 100)}%`;
    case "located":
      return `Signatures found: ${(data.signatures || []).length}`;
    case "comparing":
      return `Comparing with ${data.reference_count} reference signatures`;
    case "decision":
      return `Decision: ${data.decision ?? "none"}`;
    case "error":
      return `Error: ${data.detail}`;
    default:
      return name;
  }
}

/** Reads a Server-Sent Events body, calling `onEvent(name, data)` for each event. */
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event:"));
      if (!event) continue; // keep-alive comment
      const data = lines
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5))
        .join("\n");
      onEvent(event.slice(6).trim(), JSON.parse(data));
    }
  }
}

async function check(token, subject, canvas) {
  setState("checking", "Checking your signature…");
  ui.result.hidden = false;
  const form = new FormData();
  form.append("request", JSON.stringify({ items: [{ file: "capture", subject_reference: subject }] }));
  form.append("capture", await jpeg(canvas, 0.92), "capture.jpg");
  const res = await fetch("/sig/checks", {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, Accept: "text/event-stream" },
    body: form,
  });
  if (!res.ok || !res.body) {
    const problem = await res.json().catch(() => ({}));
    fail(problem.detail || `The check was refused (${res.status}).`);
    return;
  }
  let outcome = null;
  await readEvents(res.body, (name, data) => {
    addEvent(describeEvent(name, data));
    if (name === "decision") outcome = data;
    if (name === "error") fail(data.detail);
  });
  if (outcome) {
    const decision = outcome.decision ?? "ERROR";
    ui.decision.dataset.decision = decision;
    ui.decision.textContent = `${DECISION_TEXT[decision] ?? decision} (${decision})`;
    setState("done", "Done. You can close this page.");
  }
}

async function main() {
  const { token, subject } = readFragment();
  if (!token || !subject) {
    fail("This page needs a capture link from the app you are signing with.");
    return;
  }
  let stream;
  try {
    stream = await openCamera();
  } catch (err) {
    fail(err.message);
    return;
  }
  ui.video.srcObject = stream;
  ui.viewer.hidden = false;
  await ui.video.play().catch(() => undefined);
  await new Promise((r) => (ui.video.videoWidth ? r() : ui.video.addEventListener("loadedmetadata", r, { once: true })));
  ui.viewer.style.aspectRatio = `${ui.video.videoWidth} / ${ui.video.videoHeight}`;

  let captured = false;
  const capture = (canvas) => {
    if (captured) return;
    captured = true;
    ui.capture.disabled = true;
    session.stop();
    for (const track of stream.getTracks()) track.stop();
    check(token, subject, canvas).catch(() => fail("The check could not be completed. Reload the page to try again."));
  };
  const session = live(token, capture);
  ui.capture.addEventListener("click", () => capture(grab(4096)));
}

main();
