//! ChatMemory, ModelAdapter and Tool: the ports of the chat controller.
