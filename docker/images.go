// Package docker holds the lab's Dockerfiles, one build context per server
// (redis, zookeeper, postgres, mysql, etcd), each FROM the local Debian base image that
// scripts/setup.sh provides and installing Debian's own package, so container
// mode runs the same server versions as local mode. They are embedded so the
// lab can build them whatever directory it runs from.
package docker

import "embed"

// Contexts holds one directory per server image: its Dockerfile and the
// files the Dockerfile copies.
//
//go:embed redis zookeeper postgres mysql etcd
var Contexts embed.FS

// BaseImage is the image every Dockerfile starts FROM unless
// LOCKLAB_BASE_IMAGE names another (debian:bookworm where a registry serves it).
const BaseImage = "locklab/debian:bookworm"

// MySQLInitSQL is the SQL the lab's MySQL runs at every start
// (--init-file), in container mode and in local mode alike: it makes the
// user the lab and its locks connect as.
//
//go:embed mysql/init.sql
var MySQLInitSQL string
