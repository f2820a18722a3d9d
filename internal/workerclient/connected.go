package workerclient

import "errors"

// Connected returns nil while the worker has an open Work stream with the
// coordinator (welcomed, not yet ended), and why not otherwise: the
// readiness of a worker (/readyz).
func (c *Conn) Connected() error {
	c.mu.Lock()
	s := c.sess
	c.mu.Unlock()
	if s == nil {
		return errors.New("not connected to a coordinator yet")
	}
	select {
	case <-s.done:
		if s.err != nil {
			return errors.New("the coordinator's stream ended: " + s.err.Error())
		}
		return errors.New("the coordinator's stream ended")
	default:
		return nil
	}
}
