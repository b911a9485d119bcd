// The reviewer page: works a queue of FLAG items and a subject's references through the public API only.
// The credential is held in this module's memory and nowhere else (no storage, no cookie).

// Items per batch of the queue (one list request each); the page's own ?page_size=N (1 to 200) sets
// another (the browser test takes small batches, to reach the next one with few items).
const PAGE_SIZE = (() => {
  const n = Number(new URLSearchParams(location.search).get("page_size"));
  return Number.isInteger(n) && n >= 1 && n <= 200 ? n : 50;
})();
// A 429 is waited out (Retry-After, in seconds) and the request sent again, a few times; a longer wait
// (a monthly quota) is not worth waiting for and fails as any error does.
const RETRIES = 3;
const MAX_RETRY_AFTER_S = 30;

let credential = null;
let queue = []; // { item, review }
let current = -1;
let refreshTimer = null;
let listQuery = null; // the filters of the queue being worked, fixed when it was loaded
let nextCursor = null; // where its next batch starts; null once the list has ended
let queueLoad = 0; // bumped by each new queue: an older load's answer is then dropped

const $ = (id) => document.getElementById(id);

class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

async function api(path, { method = "GET", json, idempotent = false } = {}) {
  const headers = { Authorization: `Bearer ${credential}` };
  if (json !== undefined) headers["Content-Type"] = "application/json";
  // One key for every attempt: a retried write is the same request.
  if (idempotent) headers["Idempotency-Key"] = crypto.randomUUID();
  let res;
  for (let attempt = 0; ; attempt++) {
    res = await fetch(path, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
    const wait = res.status === 429 ? Number(res.headers.get("Retry-After")) : Number.NaN;
    if (attempt >= RETRIES || !Number.isInteger(wait) || wait < 0 || wait > MAX_RETRY_AFTER_S) break;
    await new Promise((resolve) => setTimeout(resolve, Math.max(wait, 1) * 1000));
  }
  if (!res.ok) {
    let problem = null;
    try {
      problem = await res.json();
    } catch {}
    throw new ApiError(res.status, problem);
  }
  return res;
}

/** An authenticated image as an object URL (image routes need the Authorization header). */
async function imageUrl(path) {
  const res = await api(path);
  return URL.createObjectURL(await res.blob());
}

function show(section) {
  for (const id of ["sign-in", "queue", "subject"]) $(id).hidden = id !== section;
  $("nav").hidden = section === "sign-in";
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const c of children) node.append(c);
  return node;
}

// ---- sign-in --------------------------------------------------------------------------------

$("sign-in-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  credential = $("credential").value.trim();
  $("credential").value = "";
  try {
    // Any cheap authenticated read tells whether the credential works.
    await api("/sig/checks?view=items&decision=FLAG&limit=1");
    $("sign-in-error").textContent = "";
    if (!location.hash || location.hash === "#") location.hash = "#/queue";
    else route();
  } catch (err) {
    credential = null;
    $("sign-in-error").textContent = `Sign-in failed: ${err.message}`;
  }
});

$("sign-out").addEventListener("click", () => {
  credential = null;
  queue = [];
  current = -1;
  queueLoad++;
  show("sign-in");
});

// ---- queue ----------------------------------------------------------------------------------

function filterQuery() {
  // Only items still waiting for a verdict: reviewed ones never take a place in a batch.
  const q = new URLSearchParams({ view: "items", decision: "FLAG", reviewed: "false", limit: String(PAGE_SIZE) });
  if ($("f-subject").value) q.set("subject_reference", $("f-subject").value);
  if ($("f-process").value) q.set("process", $("f-process").value);
  if ($("f-since").value) q.set("since", `${$("f-since").value}T00:00:00Z`);
  if ($("f-until").value) {
    const until = new Date(`${$("f-until").value}T00:00:00Z`);
    until.setUTCDate(until.getUTCDate() + 1);
    q.set("until", until.toISOString());
  }
  return q;
}

/** A new queue from the filters as they are now, newest first as the API gives it. */
async function loadQueue() {
  const load = ++queueLoad;
  listQuery = filterQuery();
  nextCursor = null;
  queue = [];
  current = -1;
  renderQueue();
  $("item").hidden = true;
  $("load-more").hidden = true;
  $("queue-status").textContent = "Loading…";
  await loadBatch(load, null);
  if (load !== queueLoad) return;
  await select(queue.length > 0 ? 0 : -1);
}

/** Appends the batch after `cursor`: up to PAGE_SIZE more items awaiting a verdict. */
async function loadBatch(load, cursor) {
  const q = new URLSearchParams(listQuery);
  if (cursor) q.set("cursor", cursor);
  $("load-more").disabled = true;
  try {
    const list = await (await api(`/sig/checks?${q}`)).json();
    // Dropped when a newer queue replaced this one, or another load of the same batch got there first.
    if (load !== queueLoad || nextCursor !== cursor) return;
    for (const item of list.items) queue.push({ item, review: null });
    nextCursor = list.next_cursor;
    renderQueue();
    showRemaining();
  } finally {
    $("load-more").disabled = false;
  }
}

async function loadMore() {
  if (!nextCursor) return;
  const load = queueLoad;
  try {
    await loadBatch(load, nextCursor);
  } catch (err) {
    if (load === queueLoad) $("queue-status").textContent = `Loading more failed: ${err.message}`;
  }
}

function showRemaining() {
  const remaining = queue.filter((e) => e.review === null).length;
  const more = nextCursor !== null;
  const status = $("queue-status");
  status.textContent =
    remaining === 0 && !more
      ? queue.length === 0
        ? "Nothing to review."
        : "Queue done."
      : `${remaining} item(s) to review${more ? ", more after these" : ""}.`;
  status.dataset.remaining = String(remaining);
  status.dataset.more = String(more);
  $("load-more").hidden = !more;
}

function renderQueue() {
  const ol = $("queue-list");
  ol.replaceChildren();
  queue.forEach((e, i) => {
    const li = el("li", { textContent: `${e.item.subject_reference} · ${e.item.check_id} · ${e.item.score?.toFixed(3) ?? "—"}` });
    li.dataset.checkId = e.item.check_id;
    if (i === current) li.classList.add("current");
    if (e.review) {
      li.classList.add("done");
      li.title = e.review.verdict;
    }
    li.addEventListener("click", () => select(i));
    ol.append(li);
  });
}

async function select(i) {
  current = i;
  renderQueue();
  const art = $("item");
  if (i < 0 || i >= queue.length) {
    art.hidden = true;
    return;
  }
  const { item, review } = queue[i];
  art.hidden = false;
  art.dataset.checkId = item.check_id;
  $("item-title").textContent = `${item.subject_reference} — ${item.check_id}`;
  const shown = item.signatures.find((s) => s.index === item.best_match?.signature_index) ?? item.signatures[0];
  $("item-meta").textContent =
    `Decision ${item.decision}, score ${item.score?.toFixed(3) ?? "—"}` +
    (item.process ? `, process ${item.process}` : "") +
    `, checked ${item.created_at}` +
    // A low score may only mean that part of the signature was outside the image.
    (shown?.cut_off ? ". The signature runs off the page's edge: part of it may not have been compared." : "");
  $("verdict").textContent = review ? verdictText(review) : "";
  $("subject-link").href = `#/subject/${encodeURIComponent(item.subject_reference)}`;

  // The crop, with the deviating regions (page pixels) mapped onto it.
  const img = $("crop");
  const svg = $("regions");
  svg.replaceChildren();
  img.removeAttribute("src");
  try {
    img.src = await imageUrl(`/sig/checks/${encodeURIComponent(item.job_id)}/items/${item.item_index}/image`);
    if (shown) {
      const px = shown.box.w * 0.08;
      const py = shown.box.h * 0.08;
      const x0 = Math.max(0, Math.floor(shown.box.x - px));
      const y0 = Math.max(0, Math.floor(shown.box.y - py));
      const w = Math.ceil(shown.box.x + shown.box.w + px) - x0;
      const h = Math.ceil(shown.box.y + shown.box.h + py) - y0;
      svg.setAttribute("viewBox", `${x0} ${y0} ${w} ${h}`);
      for (const r of item.regions ?? []) {
        const rect = document.createElementNS("http://www.w3.org/2000/svg", "rect");
        for (const [k, v] of Object.entries({ x: r.box.x, y: r.box.y, width: r.box.w, height: r.box.h })) rect.setAttribute(k, String(v));
        const title = document.createElementNS("http://www.w3.org/2000/svg", "title");
        title.textContent = `deviation ${r.deviation}`;
        rect.append(title);
        svg.append(rect);
      }
    }
  } catch (err) {
    img.alt = `Crop unavailable: ${err.message}`;
  }

  // The subject's live references beside it.
  const thumbs = $("ref-thumbs");
  thumbs.replaceChildren();
  try {
    const subject = await (await api(`/sig/subjects/${encodeURIComponent(item.subject_reference)}`)).json();
    for (const ref of subject.references.filter((r) => r.status === "enrolled").slice(0, 8)) {
      const fig = el(
        "figure",
        {},
        el("img", { alt: ref.ref_id }),
        el("figcaption", { textContent: `${ref.ref_id}${ref.kind === "learned" ? " (learned)" : ""}` }),
      );
      thumbs.append(fig);
      imageUrl(new URL(ref.image_url).pathname).then(
        (u) => (fig.querySelector("img").src = u),
        () => {},
      );
    }
  } catch (err) {
    thumbs.textContent = `References unavailable: ${err.message}`;
  }
}

function verdictText(review) {
  const l = review.learning;
  const learning = l.status === "refused" ? `refused (${l.reason})` : l.status;
  return `${review.verdict === "genuine" ? "Confirmed genuine" : "Marked forged"} by ${review.reviewed_by}; learning: ${learning}`;
}

async function verdict(kind) {
  const entry = queue[current];
  if (!entry || entry.review) return;
  const { item } = entry;
  const path = `/sig/checks/${encodeURIComponent(item.job_id)}/items/${item.item_index}/${kind === "genuine" ? "confirm" : "reject"}`;
  try {
    entry.review = await (await api(path, { method: "POST", idempotent: true })).json();
    $("verdict").textContent = verdictText(entry.review);
    showRemaining();
    let next = queue.findIndex((e, i) => i > current && e.review === null);
    // The batch is worked through: the next one follows on, so the keyboard never runs dry while items wait.
    if (next < 0 && nextCursor) {
      await loadMore();
      next = queue.findIndex((e, i) => i > current && e.review === null);
    }
    if (next >= 0) await select(next);
    else renderQueue();
  } catch (err) {
    $("verdict").textContent = `Not recorded: ${err.message}`;
  }
}

$("btn-confirm").addEventListener("click", () => verdict("genuine"));
$("btn-forged").addEventListener("click", () => verdict("forged"));
$("load-more").addEventListener("click", () => loadMore());
$("filters").addEventListener("submit", (e) => {
  e.preventDefault();
  loadQueue().catch((err) => ($("queue-status").textContent = err.message));
});

document.addEventListener("keydown", (e) => {
  if ($("queue").hidden || e.target instanceof HTMLInputElement || e.metaKey || e.ctrlKey || e.altKey) return;
  if (e.key === "c") verdict("genuine");
  else if (e.key === "f") verdict("forged");
  else if (e.key === "j" && current < queue.length - 1) select(current + 1);
  else if (e.key === "k" && current > 0) select(current - 1);
});

// ---- subject --------------------------------------------------------------------------------

async function loadSubject(name) {
  clearTimeout(refreshTimer);
  const subject = await (await api(`/sig/subjects/${encodeURIComponent(name)}`)).json();
  $("subject-title").textContent = `Subject ${subject.subject_reference}`;
  const counts = $("subject-counts");
  counts.textContent = `${subject.reference_counts.anchors} anchor(s), ${subject.reference_counts.learned} learned`;
  counts.dataset.learned = String(subject.reference_counts.learned);
  const tbody = $("refs");
  tbody.replaceChildren();
  for (const ref of subject.references) {
    const p = ref.provenance;
    const prov =
      ref.kind === "learned"
        ? `from check ${p.learned_from}, confirmed by ${p.confirmed_by} at ${p.confirmed_at}, learned at ${p.learned_at}`
        : `${p.method}, enrolled at ${p.enrolled_at ?? "—"} (${ref.source}, ${ref.status})`;
    const img = el("img", { alt: ref.ref_id });
    const action = el("td");
    if (ref.kind === "learned" && p.learned_from) {
      const b = el("button", { type: "button", textContent: "Unlearn" });
      b.addEventListener("click", () => unlearn(name, { checks: [p.learned_from] }));
      action.append(b);
    }
    const row = el(
      "tr",
      {},
      el("td", {}, img),
      el("td", { textContent: ref.ref_id }),
      el("td", { textContent: ref.kind }),
      el("td", { textContent: prov }),
      action,
    );
    row.dataset.refId = ref.ref_id;
    row.dataset.kind = ref.kind;
    tbody.append(row);
    if (ref.status === "enrolled")
      imageUrl(new URL(ref.image_url).pathname).then(
        (u) => (img.src = u),
        () => {},
      );
  }
  const list = $("reviews");
  list.replaceChildren();
  for (const r of subject.learning?.recent ?? [])
    list.append(el("li", { textContent: `${r.check_id}: ${verdictText(r)}${r.learning.detail ? ` — ${r.learning.detail}` : ""}` }));
  // Learning runs on a queue: while a confirmation waits for it, look again shortly.
  if ((subject.learning?.recent ?? []).some((r) => r.learning.status === "queued")) {
    refreshTimer = setTimeout(() => loadSubject(name).catch(() => {}), 1000);
  }
}

async function unlearn(name, body) {
  try {
    const out = await (
      await api(`/sig/subjects/${encodeURIComponent(name)}/references/unlearn`, { method: "POST", json: body, idempotent: true })
    ).json();
    $("subject-status").textContent = `Unlearned ${out.removed.length} reference(s); ${out.blocked_checks.length} check(s) blocked.`;
    await loadSubject(name);
  } catch (err) {
    $("subject-status").textContent = `Unlearn failed: ${err.message}`;
  }
}

$("unlearn-since").addEventListener("submit", (e) => {
  e.preventDefault();
  const name = decodeURIComponent(location.hash.slice("#/subject/".length));
  unlearn(name, { since: new Date($("since").value).toISOString() });
});

// ---- routing --------------------------------------------------------------------------------

function route() {
  clearTimeout(refreshTimer);
  if (!credential) return show("sign-in");
  const hash = location.hash;
  if (hash.startsWith("#/subject/")) {
    show("subject");
    loadSubject(decodeURIComponent(hash.slice("#/subject/".length))).catch((err) => ($("subject-status").textContent = err.message));
  } else {
    show("queue");
    loadQueue().catch((err) => ($("queue-status").textContent = err.message));
  }
}

window.addEventListener("hashchange", route);
route();
