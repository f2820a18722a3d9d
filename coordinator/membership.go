package coordinator

import (
	"context"

	"github.com/trigrid/trigrid/api"
)

// WorkerGone tells the scheduler a worker is gone (membership declared it
// dead or it left): its attempts are requeued and its stream, if still
// open, is closed. It does not block.
func (s *Server) WorkerGone(id api.WorkerID, reason string) {
	go s.post(context.Background(), func() {
		if sess := s.sessions[id]; sess != nil {
			s.endSession(sess, reason)
		}
	})
}

// MemberGone is WorkerGone for membership news of one worker process:
// it ends the session under id only when that session is of instance (or
// instance is ""), so news of a process that has since been replaced
// under the same name leaves its successor alone. It does not block.
func (s *Server) MemberGone(id api.WorkerID, instance, reason string) {
	go s.post(context.Background(), func() {
		if sess := s.sessions[id]; sess != nil && (instance == "" || sess.instance == instance) {
			s.endSession(sess, reason)
		}
	})
}
