package db

import "time"

// Workspace is where a run's working directory lives: the data of workspace_created, and what the
// runs row keeps of it (working_path, workspace_home, workspace_remote). A replica reaches a
// workspace when it sees the same THREADFLOW_HOME (Home), or when it can recreate it from Remote.
type Workspace struct {
	Home      string `json:"home"`                // token of the THREADFLOW_HOME's marker file
	Host      string `json:"host"`                // host name of the process that made it
	Path      string `json:"path"`                // the working directory
	Branch    string `json:"branch,omitempty"`    // threadflow/<run-id> when it is a git checkout
	Remote    string `json:"remote,omitempty"`    // WORKSPACE_REMOTE it is pushed to, without credentials
	Recreated bool   `json:"recreated,omitempty"` // made from Remote, as the run's last save left it
	// Replaced: a fresh workspace that replaced one which never reached Remote (no node's save was
	// pushed): the run's started nodes run again in it.
	Replaced bool `json:"replaced,omitempty"`
}

// Home is one live process's THREADFLOW_HOME, as it announced it (AnnounceHome).
type Home struct {
	Token     string // the token in the home's marker file
	Owner     string // REPLICA_ID of the process
	Host      string
	Remote    string // its WORKSPACE_REMOTE, without credentials
	ExpiresAt time.Time
}
