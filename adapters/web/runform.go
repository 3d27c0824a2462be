package web

import (
	"context"
	"net/http"
	"regexp"

	"go.uber.org/zap"

	"threadflow/conversation"
)

// The dashboard's Run form (/run/{workflow}): a workflow's typed inputs as fields, checked by the
// bot's Forms exactly as a typed command or a chat modal is; a refused value is shown beside its
// field and nothing is started; an accepted form starts the run as the viewer, in their own chat
// conversation (its thread opens on the chat page), and shows the run's page.

// workflowNamePattern is what a workflow name in an address may be (workflow ids).
var workflowNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

type runFormData struct {
	Viewer  viewer
	Form    *conversation.Form
	Values  map[string]string
	Errors  map[string]string
	General string // a refusal about no field
}

// formMessage is the message a form acts as: the viewer, in their own conversation.
func formMessage(v viewer) conversation.Message {
	return conversation.Message{Address: v.Chat, UserID: v.ID, UserName: v.Name, Direct: true, Via: v.via()}
}

func (s *Server) runForm(w http.ResponseWriter, r *http.Request) {
	f, v, ok := s.formOf(w, r)
	if !ok {
		return
	}
	values := map[string]string{}
	for _, fd := range f.Fields {
		values[fd.Name] = fd.Default
	}
	s.render(w, "runform.html", runFormData{Viewer: v, Form: f, Values: values})
}

// maxFormBytes bounds a Run form's body: at most 20 inputs of at most 4 KiB each, with room to spare.
const maxFormBytes = 128 << 10

func (s *Server) runFormSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "The form is too large or malformed; each input takes at most 4096 bytes.", http.StatusRequestEntityTooLarge)
		return
	}
	f, v, ok := s.formOf(w, r)
	if !ok || !s.mayAct(w, v) {
		return
	}
	values := map[string]string{}
	for _, fd := range f.Fields {
		if val := r.PostFormValue(fd.Name); val != "" {
			values[fd.Name] = val
		}
	}
	runID, refused := s.cfg.Forms.Submit(r.Context(), formMessage(v), conversation.Submission{Workflow: f.Workflow, Values: values})
	if len(refused) == 0 {
		http.Redirect(w, r, "/runs/"+runID, http.StatusSeeOther)
		return
	}
	s.cfg.Log.Info("web.run_form_refused", zap.String("workflow", f.Workflow), zap.Int("problems", len(refused)))
	w.WriteHeader(http.StatusUnprocessableEntity)
	s.render(w, "runform.html", runFormData{Viewer: v, Form: f, Values: values, Errors: refused, General: refused[""]})
}

// formOf finds the form of the workflow the address names, answering when there is none.
func (s *Server) formOf(w http.ResponseWriter, r *http.Request) (*conversation.Form, viewer, bool) {
	name, v := r.PathValue("workflow"), s.viewer(r)
	if s.cfg.Forms == nil || !workflowNamePattern.MatchString(name) {
		http.NotFound(w, r)
		return nil, v, false
	}
	f, err := s.cfg.Forms.Form(r.Context(), formMessage(v), name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return nil, v, false
	}
	return f, v, true
}

// formWorkflows are the workflows the viewer may start from a form, for the runs page.
func (s *Server) formWorkflows(ctx context.Context, v viewer) []string {
	if s.cfg.Forms == nil {
		return nil
	}
	return s.cfg.Forms.Workflows(ctx, formMessage(v))
}
