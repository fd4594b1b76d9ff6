# Shared by optimizer(), dataset() and lr_scheduler(): R6 classes with a
# generator function, as R torch builds them.

