// Command etcd is etcd's own server entry point (what etcd's root module's main.go does),
// built from go.etcd.io/etcd/server/v3 so that one module serves the whole build.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
