// Headers only: see include/CEpoll.h.
