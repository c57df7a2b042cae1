// What CrossingFloor needs of Linux that Swift's Glibc module leaves out: epoll and eventfd.
#include <sys/epoll.h>
#include <sys/eventfd.h>
