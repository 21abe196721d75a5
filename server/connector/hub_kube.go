package connector

// Live is one connection this hub holds, for jobs that ask every
// connected cluster something (the Kubernetes change feed).
type Live struct {
	Identity
	Hello Hello
}

// LiveOf lists this hub's connections whose hello says kind (kube: "kubernetes").
func (h *Hub) LiveOf(kind string) []Live {
	h.mu.Lock()
	conns := make([]*Conn, 0, len(h.conns))
	for _, c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	var out []Live
	for _, c := range conns {
		c.mu.Lock()
		if c.hello.Kind == kind && !c.closed {
			out = append(out, Live{Identity: c.id, Hello: c.hello})
		}
		c.mu.Unlock()
	}
	return out
}
