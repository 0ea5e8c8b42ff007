// Command argocd runs the parts of Argo CD the lab needs, chosen like upstream's cmd/main.go does (ARGOCD_BINARY_NAME,
// else the name it was started as, so symlinks named after each component work): argocd-application-controller,
// argocd-repo-server, and argocd-redis ADDR (an in-process Redis, the one `argocd --core` uses, so the lab needs no
// redis-server). The API server, UI, Dex and CLI are left out on purpose:
// the GitOps suites drive Applications through the Kubernetes API, as an operator's automation would.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/alicebob/miniredis/v2"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	appcontroller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	"github.com/argoproj/argo-cd/v3/util/log"
)

func init() {
	klog.SetLogger(log.NewLogrusLogger(log.NewWithCurrentConfig()))
}

func main() {
	var command *cobra.Command
	name := filepath.Base(os.Args[0])
	if env := os.Getenv("ARGOCD_BINARY_NAME"); env != "" {
		name = env
	}
	switch name {
	case "argocd-application-controller":
		command = appcontroller.NewCommand()
	case "argocd-repo-server":
		command = reposerver.NewCommand()
	case "argocd-redis":
		if len(os.Args) != 2 {
			fmt.Fprintln(os.Stderr, "usage: argocd-redis 127.0.0.1:PORT")
			os.Exit(2)
		}
		os.Exit(serveRedis(os.Args[1]))
	default:
		fmt.Fprintf(os.Stderr, "run as argocd-application-controller, argocd-repo-server or argocd-redis (ARGOCD_BINARY_NAME or the program's name), not %q\n", name)
		os.Exit(2)
	}
	if err := command.Execute(); err != nil {
		os.Exit(1)
	}
}

func serveRedis(addr string) int {
	server := miniredis.NewMiniRedis()
	if err := server.StartAddr(addr); err != nil {
		fmt.Fprintf(os.Stderr, "redis: %v\n", err)
		return 1
	}
	fmt.Printf("redis: listening on %s\n", server.Addr())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	server.Close()
	return 0
}
