  // The composer's helpers, all optional (without JavaScript the form posts as it is):
  // - @-autocomplete: typing "@Bo" lists the colleagues whose name or handle starts so (an ARIA combobox: arrows
  //   move, Enter or Tab picks, Escape closes); picking writes the handle ("@bob "), which never splits a name.
  // - a character counter once an ask's question is within 10 % of askwith's cap, said politely when it gets near
  //   and when it goes over (not at every key);
  // - a suggested fix ("Did you mean …?") put in the box in one click, the caret at its end.
  (() => {
    const box = document.getElementById("composer-text");
    const list = document.getElementById("mention-list");
    const count = document.getElementById("composer-count");
    const status = document.getElementById("composer-count-status");
    if (!box || !list || !count || !status) return;
    const options = [...list.querySelectorAll("[role=option]")];
    const cap = Number(count.dataset.cap);
    let active = -1;
    let zone = "";
    box.setAttribute("role", "combobox");
    box.setAttribute("aria-autocomplete", "list");
    box.setAttribute("aria-controls", list.id);
    box.setAttribute("aria-expanded", "false");

    // The mention being typed: "@" at the start or after a space, up to the caret; a display name may hold spaces.
    const typing = () => {
      const before = box.value.slice(0, box.selectionStart);
      const match = before.match(/(?:^|\s)@([^\s@]*(?: [^\s@]+){0,2})$/);
      return match ? {text: match[1].toLowerCase(), start: before.length - match[1].length - 1} : null;
    };
    const shown = () => options.filter((option) => !option.hidden);
    const highlight = (index) => {
      active = index;
      shown().forEach((option, i) => option.setAttribute("aria-selected", String(i === index)));
      const current = shown()[index];
      if (current) { box.setAttribute("aria-activedescendant", current.id); current.scrollIntoView({block: "nearest"}); }
    };
    const close = () => {
      list.hidden = true;
      active = -1;
      box.setAttribute("aria-expanded", "false");
      box.removeAttribute("aria-activedescendant");
    };
    const suggest = () => {
      const mention = typing();
      if (!mention) return close();
      for (const option of options) {
        const name = option.dataset.name.toLowerCase();
        const words = [name, ...name.split(/\s+/), option.dataset.handle.toLowerCase()];
        option.hidden = !words.some((word) => word.startsWith(mention.text));
      }
      if (!shown().length) return close();
      list.hidden = false;
      box.setAttribute("aria-expanded", "true");
      highlight(0);
    };
    const pick = (option) => {
      const mention = typing();
      if (!mention) return close();
      const handle = `@${option.dataset.handle} `;
      box.value = box.value.slice(0, mention.start) + handle + box.value.slice(box.selectionStart);
      const caret = mention.start + handle.length;
      box.setSelectionRange(caret, caret);
      close();
      box.focus();
      recount();
    };
    const recount = () => {
      const ask = box.value.match(/^\s*\/ask-with((?:\s+@[\w.\-]+)*)(\s[\s\S]*)?$/i);
      const length = ask ? (ask[2] || "").trim().length : 0;
      const near = ask !== null && length >= cap * 0.9;
      count.hidden = !near;
      count.classList.toggle("over", length > cap);
      count.textContent = near ? `${length.toLocaleString("en")} / ${cap.toLocaleString("en")} characters` : "";
      const now = !near ? "" : length > cap ? "over" : "near";
      if (now === zone) return;
      zone = now;
      status.textContent = now === "over" ? `Over askwith's ${cap.toLocaleString("en")}-character limit for a question.`
        : now === "near" ? `Near askwith's ${cap.toLocaleString("en")}-character limit for a question.` : "";
    };

    box.addEventListener("input", () => { suggest(); recount(); });
    box.addEventListener("click", suggest);
    box.addEventListener("blur", close);
    box.addEventListener("keydown", (event) => {
      if (list.hidden || event.isComposing) return;
      const many = shown().length;
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        highlight((active + (event.key === "ArrowDown" ? 1 : many - 1)) % many);
      } else if ((event.key === "Enter" && !event.shiftKey) || event.key === "Tab") {
        if (active < 0) return;
        event.preventDefault();
        event.stopPropagation();  // Enter picks here; it does not send
        pick(shown()[active]);
      } else if (event.key === "Escape") {
        event.preventDefault();
        close();
      }
    });
    list.addEventListener("mousedown", (event) => event.preventDefault());  // the box keeps the focus and caret
    list.addEventListener("click", (event) => {
      const option = event.target.closest("[role=option]");
      if (option) pick(option);
    });
    document.addEventListener("click", (event) => {
      const fix = event.target.closest("[data-put-draft]");
      if (!fix) return;
      event.preventDefault();
      box.value = fix.dataset.putDraft;
      box.focus();
      box.setSelectionRange(box.value.length, box.value.length);
      recount();
    });
    box.setSelectionRange(box.value.length, box.value.length);  // a text kept after an error: carry on at its end
    recount();
  })();
