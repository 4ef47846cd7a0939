-- Where the site reaches a node (Slurm's NodeAddr): an interactive
-- session's app on a Slurm node is proxied to this host only, never to
-- an address the job could choose. NULL for nodes an admin added (the
-- local executor reaches its sessions over Unix sockets).
ALTER TABLE nodes ADD COLUMN addr TEXT;
