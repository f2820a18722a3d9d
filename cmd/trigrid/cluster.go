package main

import "github.com/spf13/cobra"

// clusterCommands are the commands of a distributed run: the coordinator
// and worker daemons and the clients that talk to a coordinator.
func clusterCommands() []*cobra.Command {
	return []*cobra.Command{
		newSubmitCommand(),
		newStatusCommand(),
		newCancelCommand(),
		newCoordinatorCommand(),
		newWorkerCommand(),
	}
}
