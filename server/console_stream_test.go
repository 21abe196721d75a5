package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// The live tool.output streams into the chat's tool card: a command on the
// server that prints a line, sleeps, prints another, is approved inline,
// and the card's output grows line by line while the call still runs,
// before its result (exit code, "ok") replaces it.
func TestConsoleChatToolOutputStreamsIntoTheCard(t *testing.T) {
	const command = `echo tick 1; sleep 1; echo tick 2; sleep 1; echo tick 3`
	fake := llmfake.New(t,
		llmfake.Reply("Watching the ticks.", llmfake.Call{Name: "run_command", Arguments: `{"command":"` + command + `","target":"server"}`}),
		llmfake.Text("It ticked three times."),
	)
	env := newEnv(t, withLLM(fake), allowLocal)
	c := env.register("op@example.com")
	withProject(t, env, c)
	ctx, cancel := browser(t)
	defer cancel()
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, env.URL, "op@example.com")
	err := chromedp.Do(ctx,
		click(`#nav a[href="/chat"]`),
		chromedp.WaitVisible(q(`#chat-message`)),
		chromedp.SendKeys(q(`#chat-message`), "count the ticks on the server"),
		click(`#chat-send`),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the approval request", `!!document.querySelector('#chat-log .tool.waiting .decision button.approve')`)

	// Record every state of the card: its output and its status.
	js(t, ctx, `(() => {
		window.__card = [];
		const card = document.querySelector('#chat-log .tool');
		const seen = () => {
			const s = {out: card.querySelector('pre.output').textContent, status: card.querySelector('.tool-status').textContent};
			const last = window.__card[window.__card.length - 1];
			if (!last || last.out !== s.out || last.status !== s.status) window.__card.push(s);
		};
		new MutationObserver(seen).observe(card, {subtree: true, childList: true, characterData: true});
	})()`)
	if err := chromedp.Do(ctx, click(`#chat-log .tool.waiting .decision button.approve`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the result", textHas(`#chat-log .tool .tool-status`, "ok")+` && `+textHas(`#chat-log .tool .tool-meta`, "exit 0"))
	waitJS(t, ctx, "the answer", textHas(`#chat-log`, "It ticked three times."))
	type state struct{ Out, Status string }
	states, err := chromedp.Run(ctx, chromedp.Evaluate[[]state](`window.__card`))
	if err != nil {
		t.Fatal(err)
	}
	// Live states: output present, the call not finished yet.
	var live []string
	for _, s := range states {
		if s.Status != "ok" && s.Out != "" {
			live = append(live, s.Out)
		}
	}
	if len(live) < 2 || !strings.Contains(live[0], "tick 1") || strings.Contains(live[0], "tick 3") || !strings.Contains(live[len(live)-1], "tick 2") {
		t.Fatalf("the card did not grow while the command ran; live states %q of %+v", live, states)
	}
	final := states[len(states)-1]
	if !strings.Contains(final.Out, "exit code 0") || !strings.Contains(final.Out, "tick 3") {
		t.Fatalf("the card's result: %+v", final)
	}
	visit(t, ctx, "chat-live-output", 1200, 900)
}
