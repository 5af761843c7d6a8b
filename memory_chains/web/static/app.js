// The chat page of `memory-chains serve`: plain JavaScript, no build step, no dependency.
// POST /chat streams server-sent events (start, token…, final | error), read with fetch.
"use strict";

const STRINGS = {
  fr: {
    subtitle: "chat avec mémoire", user: "Utilisateur", new: "Nouvelle conversation",
    export: "Exporter mes données", forgetUser: "Oublier toutes mes données", send: "Envoyer",
    placeholder: "Votre question…", memory: "Mémoire de la conversation", session: "Session",
    hint: "Ce que la prochaine réponse recevra de chaque mémoire, pour la dernière question.",
    rewritten: "question réécrite", sources: "sources", none: "aucune",
    stateless: "Réponse sans mémoire", thinking: "Réponse en cours…",
    waiting: "En file d'attente…", busy: "Le modèle est occupé : réessayez dans {s} s.",
    error: "Erreur", empty: "vide", tokens: "jetons", turns: "échange(s)",
    summarised: "résumé(s)", entities: "entité(s)", facts: "fait(s)", profile: "préférence(s)",
    confirmForget: "Effacer toutes les données de « {u} » (toutes les conversations, le profil, les faits) ? C'est définitif.",
    forgotten: "Données effacées.", newStarted: "Nouvelle conversation : la précédente est oubliée.",
    storeDown: "stockage indisponible",
    blocks: {
      recent: "Fenêtre (derniers échanges)", summary: "Résumé", entities: "Entités",
      profile: "Profil", facts: "Faits", recalled: "Tours rappelés (autres conversations)",
    },
    status: { kept: "gardé", shrunk: "réduit", dropped: "écarté", empty: "vide" },
  },
  en: {
    subtitle: "chat with memory", user: "User", new: "New conversation",
    export: "Export my data", forgetUser: "Forget all my data", send: "Send",
    placeholder: "Your question…", memory: "Conversation memory", session: "Session",
    hint: "What the next answer will get from each memory, for the last question.",
    rewritten: "rewritten question", sources: "sources", none: "none",
    stateless: "Answered without memory", thinking: "Answering…",
    waiting: "Queued…", busy: "The model is busy: try again in {s} s.",
    error: "Error", empty: "empty", tokens: "tokens", turns: "exchange(s)",
    summarised: "summarised", entities: "entity(ies)", facts: "fact(s)", profile: "preference(s)",
    confirmForget: "Erase all the data of \u201c{u}\u201d (every conversation, the profile, the facts)? This cannot be undone.",
    forgotten: "Data erased.", newStarted: "New conversation: the previous one is forgotten.",
    storeDown: "store unavailable",
    blocks: {
      recent: "Window (recent exchanges)", summary: "Summary", entities: "Entities",
      profile: "Profile", facts: "Facts", recalled: "Recalled turns (other conversations)",
    },
    status: { kept: "kept", shrunk: "shrunk", dropped: "dropped", empty: "empty" },
  },
};

const $ = (selector) => document.querySelector(selector);
let lang = localStorage.getItem("mc-lang") || (navigator.language.startsWith("fr") ? "fr" : "en");
let session = sessionStorage.getItem("mc-session") || newSessionId();
let inFlight = null; // the AbortController of the answer being streamed
let lastView = null;

function t(key) { return STRINGS[lang][key]; }

function newSessionId() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  const id = "s-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  sessionStorage.setItem("mc-session", id);
  return id;
}

function user() { return $("#user").value.trim() || "guest"; }

function applyLanguage() {
  document.documentElement.lang = lang;
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of document.querySelectorAll("[data-i18n-placeholder]")) {
    el.placeholder = t(el.dataset.i18nPlaceholder);
  }
  $("#lang").textContent = lang === "fr" ? "EN" : "FR";
  if (lastView) renderMemory(lastView);
}

function setStatus(text, kind = "") {
  const status = $("#status");
  status.textContent = text;
  status.className = kind;
}

function addMessage(role, text) {
  const item = document.createElement("li");
  item.className = `msg ${role}`;
  const body = document.createElement("div");
  body.className = "text";
  body.textContent = text;
  item.append(body);
  $("#messages").append(item);
  item.scrollIntoView({ block: "end" });
  return item;
}

function footer(item, final) {
  const meta = document.createElement("div");
  meta.className = "meta";
  if (final.was_rewritten) {
    const line = document.createElement("p");
    line.className = "rewritten";
    line.textContent = `\u21b3 ${t("rewritten")} : ${final.rewritten}`;
    meta.append(line);
  }
  const names = [...new Set(final.sources.map((s) => s.source))];
  const line = document.createElement("p");
  line.className = "sources";
  line.textContent = `\u21b3 ${t("sources")} : ${names.join(", ") || t("none")}`;
  line.title = final.sources.map((s) => `[${s.source}] ${s.excerpt}`).join("\n\n");
  meta.append(line);
  if (final.memory.stateless) {
    const note = document.createElement("p");
    note.className = "stateless";
    note.textContent = `\u26a0 ${t("stateless")} (${final.memory.note})`;
    meta.append(note);
  }
  item.append(meta);
}

// Server-sent events over a POST response: blocks separated by a blank line.
async function* readEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) yield { event, data: JSON.parse(data.join("\n")) };
    }
  }
}

async function send(message) {
  addMessage("user", message);
  const item = addMessage("assistant", "");
  item.classList.add("streaming");
  const text = item.querySelector(".text");
  setStatus(t("waiting"));
  inFlight = new AbortController();
  $("#send").disabled = true;
  try {
    const response = await fetch("/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ session, message, user: user() }),
      signal: inFlight.signal,
    });
    if (!response.ok) {
      const problem = await response.json();
      const retry = response.headers.get("Retry-After");
      const shown = response.status === 503 && retry ? t("busy").replace("{s}", retry) : problem.message;
      item.classList.add("failed");
      text.textContent = `${t("error")} : ${shown}`;
      setStatus("");
      return;
    }
    for await (const { event, data } of readEvents(response)) {
      if (event === "start") setStatus(t("thinking"));
      else if (event === "token") text.textContent += data.text;
      else if (event === "final") {
        text.textContent = data.answer;
        footer(item, data);
        item.classList.add("done");
      } else if (event === "error") {
        item.classList.add("failed");
        text.textContent = `${t("error")} : ${data.message}`;
      }
      item.scrollIntoView({ block: "end" });
    }
    setStatus("");
  } catch (error) {
    if (error.name !== "AbortError") {
      item.classList.add("failed");
      text.textContent = `${t("error")} : ${error.message}`;
    }
    setStatus("");
  } finally {
    item.classList.remove("streaming");
    inFlight = null;
    $("#send").disabled = false;
    await refreshMemory();
  }
}

function renderMemory(view) {
  lastView = view;
  $("#session-id").textContent = view.session;
  const counts = [
    `${view.turns} ${t("turns")}`,
    `${view.summarised_turns} ${t("summarised")}`,
    `${view.entities} ${t("entities")}`,
    `${view.profile} ${t("profile")}`,
    `${view.facts} ${t("facts")}`,
    `${view.total_tokens}/${view.budget} ${t("tokens")}`,
  ];
  if (!view.store.available) counts.push(`\u26a0 ${t("storeDown")}`);
  $("#memory-summary").textContent = counts.join(" \u00b7 ");
  const blocks = $("#blocks");
  blocks.replaceChildren();
  for (const block of view.blocks) {
    const box = document.createElement("section");
    box.className = `block ${block.status}`;
    box.dataset.block = block.name;
    const title = document.createElement("h3");
    const label = STRINGS[lang].blocks[block.name] || block.name;
    title.textContent = label;
    const badge = document.createElement("span");
    badge.className = "tokens";
    badge.textContent = `${block.tokens} ${t("tokens")} \u00b7 ${STRINGS[lang].status[block.status]}`;
    title.append(badge);
    box.append(title);
    const list = document.createElement("ul");
    for (const entry of block.items) {
      const li = document.createElement("li");
      li.textContent = entry.replace(/^- /, "");
      list.append(li);
    }
    if (!block.items.length) {
      const li = document.createElement("li");
      li.className = "empty";
      li.textContent = `(${t("empty")})`;
      list.append(li);
    }
    box.append(list);
    blocks.append(box);
  }
  document.body.dataset.memoryTurns = String(view.turns);
}

async function refreshMemory() {
  const params = new URLSearchParams({ session, user: user() });
  const response = await fetch(`/memory?${params}`);
  if (response.ok) renderMemory(await response.json());
}

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.message);
  return data;
}

async function newConversation() {
  if (inFlight) inFlight.abort(); // an answer cut short is never memorised
  try {
    await post("/forget", { session, user: user() });
    session = newSessionId();
    $("#messages").replaceChildren();
    setStatus(t("newStarted"), "ok");
  } catch (error) {
    setStatus(`${t("error")} : ${error.message}`, "failed");
  }
  await refreshMemory();
}

async function forgetUser() {
  if (!window.confirm(t("confirmForget").replace("{u}", user()))) return;
  if (inFlight) inFlight.abort();
  try {
    await post("/forget-user", { user: user(), confirm: true });
    session = newSessionId();
    $("#messages").replaceChildren();
    setStatus(t("forgotten"), "ok");
  } catch (error) {
    setStatus(`${t("error")} : ${error.message}`, "failed");
  }
  await refreshMemory();
}

function exportData() {
  window.location.href = `/export?${new URLSearchParams({ user: user() })}`;
}

document.addEventListener("DOMContentLoaded", () => {
  $("#user").value = localStorage.getItem("mc-user") || "guest";
  applyLanguage();
  $("#composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const message = $("#message").value.trim();
    if (!message || inFlight) return;
    $("#message").value = "";
    send(message);
  });
  $("#message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("#composer").requestSubmit();
    }
  });
  $("#new-conversation").addEventListener("click", newConversation);
  $("#forget-user").addEventListener("click", forgetUser);
  $("#export").addEventListener("click", exportData);
  $("#lang").addEventListener("click", () => {
    lang = lang === "fr" ? "en" : "fr";
    localStorage.setItem("mc-lang", lang);
    applyLanguage();
  });
  $("#user").addEventListener("change", () => {
    localStorage.setItem("mc-user", user());
    refreshMemory();
  });
  refreshMemory();
});
