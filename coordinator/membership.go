package coordinator

import (
	"context"
	"time"

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
// under the same name leaves its successor alone.
//
// The news is second hand and may be stale: a member back from a
// partition reports the members it could not reach as dead, and the
// others believe it until those refute it. So news of a worker whose
// stream is live (heard from within silentAfter) ends nothing at once; it
// is checked again when silentAfter has passed since the worker was last
// heard, and the session ends then only if the worker has gone silent.
// It does not block.
func (s *Server) MemberGone(id api.WorkerID, instance, reason string) {
	go s.post(context.Background(), func() { s.memberGone(id, instance, reason) })
}

// memberGone is MemberGone on the Run goroutine.
func (s *Server) memberGone(id api.WorkerID, instance, reason string) {
	sess := s.sessions[id]
	if sess == nil || (instance != "" && sess.instance != instance) {
		return
	}
	now := time.Now()
	if !sess.live(s.cfg.HeartbeatInterval, now) {
		s.endSession(sess, reason)
		return
	}
	wait := silentAfter(s.cfg.HeartbeatInterval) - now.Sub(time.Unix(0, sess.heard.Load()))
	s.log.Info("membership reports a worker gone that is still heard from; checking again", "worker", id, "reason", reason, "in", wait)
	time.AfterFunc(wait, func() {
		s.post(context.Background(), func() {
			if s.sessions[id] == sess && !sess.live(s.cfg.HeartbeatInterval, time.Now()) {
				s.endSession(sess, reason)
			}
		})
	})
}
