extension WebPage {
    /// `/page.css`: the page's style sheet.
    static let style = #"""
        :root {
          --fg: #1f2937; --muted: #6b7280; --line: #e5e7eb; --bg: #f9fafb; --card: #fff;
          --accent: #2563eb; --ok: #16a34a; --warn: #d97706; --bad: #dc2626;
          font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); }
        header {
          display: flex; align-items: center; gap: 1rem; padding: .75rem max(1.5rem, calc((100% - 69rem) / 2));
          background: var(--card); border-bottom: 1px solid var(--line);
        }
        h1 { font-size: 1.25rem; margin: 0; flex: 1; }
        h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
        main {
          display: grid; grid-template-columns: 16rem 1fr; gap: 1.5rem; padding: 1.5rem; max-width: 72rem;
          margin: 0 auto; align-items: start;
        }
        nav, section { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: 1rem; }
        #welcome { grid-column: 2; }
        #session:not([hidden]) + #welcome { display: none; }
        ul#systems { list-style: none; padding: 0; margin: 0; display: grid; gap: .5rem; }
        ul#systems li { border: 1px solid var(--line); border-radius: .4rem; padding: .5rem .6rem; }
        ul#systems li.active { border-color: var(--accent); background: #eff6ff; }
        ul#systems .name { font-weight: 600; }
        ul#systems p { margin: .2rem 0 .4rem; font-size: .85rem; color: var(--muted); }
        button {
          font: inherit; padding: .35rem .8rem; border-radius: .35rem; border: 1px solid var(--line);
          background: var(--card); cursor: pointer;
        }
        button:hover:not(:disabled) { border-color: var(--accent); }
        button:disabled { opacity: .45; cursor: default; }
        button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
        button.danger { color: var(--bad); }
        input, select {
          font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: .35rem; min-width: 0;
        }
        code, pre, #event-json { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; }
        pre { background: var(--bg); padding: .6rem; border-radius: .35rem; overflow: auto; max-height: 18rem; }
        .muted { color: var(--muted); }
        .row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .5rem 0; }
        #custom-event input { flex: 1; }
        .session-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: .75rem; }
        .session-head h2 { margin: 0; }
        .spacer { flex: 1; }
        details { margin-top: 1rem; }
        summary { cursor: pointer; color: var(--muted); }
        .badge {
          padding: .15rem .6rem; border-radius: 1rem; font-size: .85rem; background: var(--line); color: var(--fg);
        }
        .badge[data-status="live"] { background: #dcfce7; color: var(--ok); }
        .badge[data-status="connecting"], .badge[data-status="reconnecting"] { background: #fef3c7; color: var(--warn); }
        .badge[data-status="ended"] { background: #fee2e2; color: var(--bad); }
        .error { color: var(--bad); }
        .notice { background: #fef3c7; padding: .5rem .75rem; border-radius: .35rem; }
        #view { margin-top: 1rem; }
        .big { font-size: 3rem; font-weight: 700; font-variant-numeric: tabular-nums; min-width: 4ch; text-align: center; }
        .field { display: flex; flex-direction: column; align-items: center; gap: .25rem; }
        .catch { display: flex; align-items: center; gap: 2rem; font-size: 1.1rem; }
        .catch .player { padding: .75rem 1rem; border: 2px solid var(--line); border-radius: .5rem; }
        .catch .player.holds { border-color: var(--accent); background: #eff6ff; }
        .light { display: inline-flex; flex-direction: column; gap: .4rem; padding: .6rem; background: #111827;
          border-radius: .75rem; }
        .lamp { width: 2.5rem; height: 2.5rem; border-radius: 50%; background: #374151; }
        .lamp.on.red { background: #ef4444; } .lamp.on.yellow { background: #facc15; } .lamp.on.green { background: #22c55e; }
        .paging input[type=search] { width: 100%; }
        #counter-amount { width: 6rem; }
        #paging-list {
          list-style: none; margin: .5rem 0 0; padding: 0; height: 22rem; overflow-y: auto;
          border: 1px solid var(--line); border-radius: .35rem;
        }
        #paging-list li { padding: .35rem .6rem; border-bottom: 1px solid var(--line); }
        #paging-list li .sub { color: var(--muted); font-size: .8rem; }
        #paging-list li.sentinel { border: 0; color: var(--muted); text-align: center; }
        @media (max-width: 48rem) { main { grid-template-columns: 1fr; } #welcome { grid-column: 1; } }
        """#
}
