package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	GoVersion string `json:"go"`
	Platform  string `json:"platform"`
}

func currentVersion() versionInfo {
	vi := versionInfo{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				vi.Commit = s.Value
			}
		}
	}
	return vi
}

func newVersionCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			vi := currentVersion()
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(vi)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "trigrid %s", vi.Version)
			if vi.Commit != "" {
				fmt.Fprintf(cmd.OutOrStdout(), " (%s)", vi.Commit)
			}
			fmt.Fprintf(cmd.OutOrStdout(), " %s %s\n", vi.GoVersion, vi.Platform)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
